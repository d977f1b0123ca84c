//! The CUDA C sources of the custom kernels and the table of every kernel the Rust side
//! launches. Launches go through this table only, so `make check-cuda` can check that
//! each name in it is in the PTX that NVRTC makes of its source.

use ctensor_base::gpu::{context, GpuContext, KernelName, KernelSource};
use ctensor_base::{DataType, Error, Result, Scalar};

use cudarc::driver::sys::CUfunction;

macro_rules! source {
    ($name:literal) => {
        KernelSource {
            name: $name,
            code: concat!(
                include_str!("cuda/prelude.cu"),
                include_str!(concat!("cuda/", $name, ".cu"))
            ),
        }
    };
}

/// Element-wise arithmetic: set, scale, add, mul, div, fma, conj, neg, sqrt, exp, abs,
/// equality with a scalar.
pub static ELEMENTWISE: KernelSource = source!("elementwise");
/// Conversions between every pair of element types.
pub static CAST: KernelSource = source!("cast");
/// Strided copies (permute, stride, inflate), the tiled 2-D transpose, strided fill,
/// clearing a triangle.
pub static LAYOUT: KernelSource = source!("layout");
/// Row sums and row extremes.
pub static REDUCE: KernelSource = source!("reduce");
/// The matrix product for the types cuBLAS has no gemm for.
pub static MATMUL: KernelSource = source!("matmul");
/// Counter-based random numbers (Philox4x32-10).
pub static RANDOM: KernelSource = source!("random");
/// Comparisons, classification, selection by a mask, element-wise maximum/minimum.
pub static COMPARE: KernelSource = source!("compare");
/// Element-wise mathematical functions (sin, log, expm1, rounding, ...).
pub static MATH: KernelSource = source!("math");

/// Every kernel source.
pub static SOURCES: [&KernelSource; 8] = [
    &ELEMENTWISE,
    &CAST,
    &LAYOUT,
    &REDUCE,
    &MATMUL,
    &RANDOM,
    &COMPARE,
    &MATH,
];

use DataType::*;

/// A set of element types and how messages name it.
#[derive(Debug)]
pub struct Types {
    /// The element types.
    pub list: &'static [DataType],
    /// Their names, for `Error::UnsupportedDType`.
    pub names: &'static str,
}

const ALL: Types = Types {
    list: &DataType::ALL,
    names: "every data type",
};
const FLOATING: Types = Types {
    list: &[Float, Double, ComplexFloat, ComplexDouble, Half, BFloat16],
    names: "f32, f64, c32, c64, f16, bf16",
};
const INTS: Types = Types {
    list: &[Int, Int64],
    names: "i32, i64",
};
const ORDERED: Types = Types {
    list: &[Float, Double, Int, Int64, Half, BFloat16],
    names: "f32, f64, i32, i64, f16, bf16",
};
const F64: Types = Types {
    list: &[Double],
    names: "f64",
};
const NON_BLAS: Types = Types {
    list: &[Int, Int64, Half, BFloat16],
    names: "i32, i64, f16, bf16",
};

/// One kernel, instantiated for a set of element types as `<base>_<suffix>` (or
/// `<base>_<dst>_<src>` for every pair, when `pairs`).
#[derive(Debug)]
pub struct Kernel {
    /// The source that defines it.
    pub source: &'static KernelSource,
    /// The name before the type suffix.
    pub base: &'static str,
    /// The element types it is instantiated for.
    pub types: Types,
    /// Instantiated for every (destination, source) pair of `types`.
    pub pairs: bool,
}

macro_rules! kernels {
    ($($id:ident = $src:ident, $base:literal, $types:expr, $pairs:expr;)*) => {
        $(
            #[doc = concat!("The `", $base, "` kernel.")]
            pub static $id: Kernel = Kernel { source: &$src, base: $base, types: $types, pairs: $pairs };
        )*
        /// Every kernel that the Rust side launches.
        pub static KERNELS: &[&Kernel] = &[$(&$id),*];
    };
}

kernels! {
    SET = ELEMENTWISE, "set", ALL, false;
    SCALE = ELEMENTWISE, "scale", ALL, false;
    ADD = ELEMENTWISE, "add", ALL, false;
    MUL = ELEMENTWISE, "mul", ALL, false;
    DIV = ELEMENTWISE, "div", ALL, false;
    FMA = ELEMENTWISE, "fma", ALL, false;
    CONJ = ELEMENTWISE, "conj", ALL, false;
    EQ_SCALAR = ELEMENTWISE, "eq_scalar", ALL, false;
    ANY_ZERO = ELEMENTWISE, "any_zero", INTS, false;
    ABS = ELEMENTWISE, "abs", ALL, false;
    CAST_PAIRS = CAST, "cast", ALL, true;
    COPY_STRIDED = LAYOUT, "copy_strided", ALL, false;
    SET_STRIDED = LAYOUT, "set_strided", ALL, false;
    TRANSPOSE2D = LAYOUT, "transpose2d", ALL, false;
    SET_MATRIX = LAYOUT, "set_matrix", ALL, false;
    INDEX_SELECT = LAYOUT, "index_select", ALL, false;
    INDEX_COPY = LAYOUT, "index_copy", ALL, false;
    NONFINITE = LAYOUT, "nonfinite", FLOATING, false;
    REDUCE_SUM = REDUCE, "reduce_sum", ALL, false;
    REDUCE_EXTREME = REDUCE, "reduce_extreme", ORDERED, false;
    ARG_EXTREME = REDUCE, "arg_extreme", ORDERED, false;
    CUMSUM = REDUCE, "cumsum", ALL, false;
    MATMUL_LOOP = MATMUL, "matmul", NON_BLAS, false;
    RANDOM_F64 = RANDOM, "random", F64, false;
    COMPARE_K = COMPARE, "compare", ALL, false;
    CLASSIFY = COMPARE, "classify", ALL, false;
    SELECT = COMPARE, "select", ALL, false;
    EXTREME2 = COMPARE, "extreme2", ORDERED, false;
    MATH_K = MATH, "math", ALL, false;
    BINARY_MATH_K = MATH, "binary_math", ALL, false;
}

/// The suffix of an element type in kernel names.
pub fn suffix(dtype: DataType) -> &'static str {
    match dtype {
        Float => "f32",
        Double => "f64",
        Int => "i32",
        Int64 => "i64",
        ComplexFloat => "c32",
        ComplexDouble => "c64",
        Half => "f16",
        BFloat16 => "bf16",
    }
}

impl Kernel {
    /// Every kernel name this entry stands for.
    pub fn names(&self) -> Vec<String> {
        let mut out = Vec::new();
        for &d in self.types.list {
            if self.pairs {
                for &s in self.types.list {
                    out.push(KernelName([self.base, suffix(d), suffix(s)]).to_string());
                }
            } else {
                out.push(KernelName([self.base, suffix(d), ""]).to_string());
            }
        }
        out
    }

    fn check(&self, dtype: DataType) -> Result<()> {
        if self.types.list.contains(&dtype) {
            Ok(())
        } else {
            Err(Error::UnsupportedDType {
                op: self.base,
                dtype,
                supported: self.types.names,
            })
        }
    }

    /// The context and the compiled kernel for element type `T`.
    pub fn get<T: Scalar>(&self) -> Result<(&'static GpuContext, CUfunction)> {
        self.check(T::DTYPE)?;
        let ctx = context()?;
        let name = KernelName([self.base, suffix(T::DTYPE), ""]);
        Ok((ctx, ctx.function(self.source, name)?))
    }

    /// The context and the compiled kernel converting `S` to `D` (for `pairs` kernels).
    pub fn get_pair<D: Scalar, S: Scalar>(&self) -> Result<(&'static GpuContext, CUfunction)> {
        self.check(D::DTYPE)?;
        self.check(S::DTYPE)?;
        let ctx = context()?;
        let name = KernelName([self.base, suffix(D::DTYPE), suffix(S::DTYPE)]);
        Ok((ctx, ctx.function(self.source, name)?))
    }
}
