//! `+ - * /` and unary `-` on tensors, numbers and results, so arithmetic chains as it
//! reads: `(&a * &b) + &c`, `2.0 * &t - &u`, `&t * c64::i()`.
//!
//! Every operator returns `Result<Tensor>` (a shape, device or borrow error is returned,
//! never a panic), and a `Result<Tensor>` is accepted as the left operand of a tensor or
//! the right operand of a tensor, so a chain needs no `?` until its end; an error
//! anywhere in the chain comes out at the end. Rust's coherence rules do not allow
//! `Result<Tensor> op number`, `Result op Result` or `-Result`: write `(...)? * 2.0`
//! there.
//! Mixed data types promote ([`promotion`](crate::core::promotion)); numbers are weak
//! (`f32 tensor * 2.0` stays `f32`). The number types are `i64`, `f64`, `c32` and `c64`,
//! so a literal is never ambiguous (`&t * 2`, `&t * 0.5`).

use ctensor_base::{c32, c64, Result};

use crate::core::promotion::Number;
use crate::core::tensor::Tensor;

macro_rules! tensor_ops {
    ($Trait:ident, $method:ident, $call:ident) => {
        impl std::ops::$Trait<&Tensor> for &Tensor {
            type Output = Result<Tensor>;
            /// Element-wise, broadcasting and promoting.
            fn $method(self, rhs: &Tensor) -> Result<Tensor> {
                Tensor::$call(self, rhs)
            }
        }
        impl std::ops::$Trait<Tensor> for &Tensor {
            type Output = Result<Tensor>;
            /// Element-wise, broadcasting and promoting.
            fn $method(self, rhs: Tensor) -> Result<Tensor> {
                Tensor::$call(self, &rhs)
            }
        }
        impl std::ops::$Trait<&Tensor> for Tensor {
            type Output = Result<Tensor>;
            /// Element-wise, broadcasting and promoting.
            fn $method(self, rhs: &Tensor) -> Result<Tensor> {
                Tensor::$call(&self, rhs)
            }
        }
        impl std::ops::$Trait<Tensor> for Tensor {
            type Output = Result<Tensor>;
            /// Element-wise, broadcasting and promoting.
            fn $method(self, rhs: Tensor) -> Result<Tensor> {
                Tensor::$call(&self, &rhs)
            }
        }
        impl std::ops::$Trait<&Tensor> for Result<Tensor> {
            type Output = Result<Tensor>;
            /// Element-wise on the left result, or its error passed on.
            fn $method(self, rhs: &Tensor) -> Result<Tensor> {
                Tensor::$call(&self?, rhs)
            }
        }
        impl std::ops::$Trait<Tensor> for Result<Tensor> {
            type Output = Result<Tensor>;
            /// Element-wise on the left result, or its error passed on.
            fn $method(self, rhs: Tensor) -> Result<Tensor> {
                Tensor::$call(&self?, &rhs)
            }
        }
        impl std::ops::$Trait<Result<Tensor>> for &Tensor {
            type Output = Result<Tensor>;
            /// Element-wise with the right result, or its error passed on.
            fn $method(self, rhs: Result<Tensor>) -> Result<Tensor> {
                Tensor::$call(self, &rhs?)
            }
        }
        impl std::ops::$Trait<Result<Tensor>> for Tensor {
            type Output = Result<Tensor>;
            /// Element-wise with the right result, or its error passed on.
            fn $method(self, rhs: Result<Tensor>) -> Result<Tensor> {
                Tensor::$call(&self, &rhs?)
            }
        }
    };
}
tensor_ops!(Add, add, add);
tensor_ops!(Sub, sub, sub);
tensor_ops!(Mul, mul, mul);
tensor_ops!(Div, div, div);

/// `tensor op number` and `number op tensor` for one number type.
macro_rules! number_ops {
    ($($n:ty),*) => {$(
        impl std::ops::Add<$n> for &Tensor {
            type Output = Result<Tensor>;
            /// `self + s` (weak promotion of the number).
            fn add(self, s: $n) -> Result<Tensor> { self.add_scalar(Number::from(s)) }
        }
        impl std::ops::Sub<$n> for &Tensor {
            type Output = Result<Tensor>;
            /// `self - s` (weak promotion of the number).
            fn sub(self, s: $n) -> Result<Tensor> { self.sub_scalar(Number::from(s)) }
        }
        impl std::ops::Mul<$n> for &Tensor {
            type Output = Result<Tensor>;
            /// `self · s` (weak promotion of the number).
            fn mul(self, s: $n) -> Result<Tensor> { self.mul_scalar(Number::from(s)) }
        }
        impl std::ops::Div<$n> for &Tensor {
            type Output = Result<Tensor>;
            /// `self / s` (weak promotion of the number).
            fn div(self, s: $n) -> Result<Tensor> { self.div_scalar(Number::from(s)) }
        }
        impl std::ops::Add<$n> for Tensor {
            type Output = Result<Tensor>;
            /// `self + s` (weak promotion of the number).
            fn add(self, s: $n) -> Result<Tensor> { self.add_scalar(Number::from(s)) }
        }
        impl std::ops::Sub<$n> for Tensor {
            type Output = Result<Tensor>;
            /// `self - s` (weak promotion of the number).
            fn sub(self, s: $n) -> Result<Tensor> { self.sub_scalar(Number::from(s)) }
        }
        impl std::ops::Mul<$n> for Tensor {
            type Output = Result<Tensor>;
            /// `self · s` (weak promotion of the number).
            fn mul(self, s: $n) -> Result<Tensor> { self.mul_scalar(Number::from(s)) }
        }
        impl std::ops::Div<$n> for Tensor {
            type Output = Result<Tensor>;
            /// `self / s` (weak promotion of the number).
            fn div(self, s: $n) -> Result<Tensor> { self.div_scalar(Number::from(s)) }
        }
        impl std::ops::Add<&Tensor> for $n {
            type Output = Result<Tensor>;
            /// `s + t` (weak promotion of the number).
            fn add(self, t: &Tensor) -> Result<Tensor> { t.add_scalar(Number::from(self)) }
        }
        impl std::ops::Sub<&Tensor> for $n {
            type Output = Result<Tensor>;
            /// `s - t` (weak promotion of the number).
            fn sub(self, t: &Tensor) -> Result<Tensor> { t.rsub_scalar(Number::from(self)) }
        }
        impl std::ops::Mul<&Tensor> for $n {
            type Output = Result<Tensor>;
            /// `s · t` (weak promotion of the number).
            fn mul(self, t: &Tensor) -> Result<Tensor> { t.mul_scalar(Number::from(self)) }
        }
        impl std::ops::Div<&Tensor> for $n {
            type Output = Result<Tensor>;
            /// `s / t` (weak promotion of the number).
            fn div(self, t: &Tensor) -> Result<Tensor> { t.rdiv_scalar(Number::from(self)) }
        }
        impl std::ops::Add<Tensor> for $n {
            type Output = Result<Tensor>;
            /// `s + t` (weak promotion of the number).
            fn add(self, t: Tensor) -> Result<Tensor> { t.add_scalar(Number::from(self)) }
        }
        impl std::ops::Sub<Tensor> for $n {
            type Output = Result<Tensor>;
            /// `s - t` (weak promotion of the number).
            fn sub(self, t: Tensor) -> Result<Tensor> { t.rsub_scalar(Number::from(self)) }
        }
        impl std::ops::Mul<Tensor> for $n {
            type Output = Result<Tensor>;
            /// `s · t` (weak promotion of the number).
            fn mul(self, t: Tensor) -> Result<Tensor> { t.mul_scalar(Number::from(self)) }
        }
        impl std::ops::Div<Tensor> for $n {
            type Output = Result<Tensor>;
            /// `s / t` (weak promotion of the number).
            fn div(self, t: Tensor) -> Result<Tensor> { t.rdiv_scalar(Number::from(self)) }
        }
    )*};
}
// One type per kind for plain numbers (plus both complex widths, which are never
// literals): with impls for both `f32` and `f64`, the literal in `&t * 2.0` would be
// ambiguous. Other number types go through `mul_scalar(x)` and friends, which take any
// `Into<Number>`, or `as f64` (exact for `f32`, `f16`, `bf16` and `i32`).
number_ops!(i64, f64, c32, c64);

impl std::ops::Neg for &Tensor {
    type Output = Result<Tensor>;
    /// Element-wise negation.
    fn neg(self) -> Result<Tensor> {
        Tensor::neg(self)
    }
}

impl std::ops::Neg for Tensor {
    type Output = Result<Tensor>;
    /// Element-wise negation.
    fn neg(self) -> Result<Tensor> {
        Tensor::neg(&self)
    }
}
