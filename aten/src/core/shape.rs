//! Tensor shapes, memory orders, and the shape arithmetic of `reshape`.

use std::fmt;

use ctensor_base::{Error, Result};
use ctensor_kernels::strides::{col_major_strides, row_major_strides};

/// The sizes of a tensor's dimensions, outermost first.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct TensorShape {
    dims: Vec<usize>,
}

/// The order in which a dense tensor's elements lie in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Order {
    /// C order: the last index varies fastest (NumPy, PyTorch, ABACUS).
    #[default]
    RowMajor,
    /// Fortran order: the first index varies fastest (BLAS, LAPACK, Fortran arrays).
    ColMajor,
}

impl Order {
    /// The dense strides of `dims` in this order, in elements.
    pub fn strides(self, dims: &[usize]) -> Vec<usize> {
        match self {
            Order::RowMajor => row_major_strides(dims),
            Order::ColMajor => col_major_strides(dims),
        }
    }
}

impl TensorShape {
    /// A shape with the given dimension sizes.
    pub fn new(dims: &[usize]) -> TensorShape {
        TensorShape {
            dims: dims.to_vec(),
        }
    }

    /// The dimension sizes.
    pub fn dims(&self) -> &[usize] {
        &self.dims
    }

    /// Number of dimensions (0 for a scalar).
    pub fn ndim(&self) -> usize {
        self.dims.len()
    }

    /// Size of dimension `dim`, or `Error::OutOfRange`.
    pub fn dim_size(&self, dim: usize) -> Result<usize> {
        self.dims
            .get(dim)
            .copied()
            .ok_or_else(|| Error::OutOfRange {
                op: "dim_size",
                what: "dimension".into(),
                given: dim as i64,
                valid: format!("0..{}", self.ndim()),
            })
    }

    /// Number of elements (1 for a scalar), saturating at `usize::MAX`; see
    /// [`checked_numel`](Self::checked_numel) for validation.
    pub fn numel(&self) -> usize {
        self.dims.iter().fold(1usize, |a, &d| a.saturating_mul(d))
    }

    /// Number of elements, or `Error::Overflow` when it does not fit in `usize`.
    pub fn checked_numel(&self, op: &'static str) -> Result<usize> {
        ctensor_kernels::args::numel(op, &self.dims)
    }

    /// Resolves a `reshape` request for a tensor of `numel` elements: every entry is a size
    /// `>= 0`, except at most one `-1`, which is inferred.
    ///
    /// The failures, each an error that names the request: two or more `-1`; a negative
    /// entry other than `-1`; a `-1` that cannot be inferred (the other sizes do not divide
    /// `numel`, or multiply to 0); an element count different from `numel`.
    pub fn resolve(numel: usize, request: &[i64]) -> Result<TensorShape> {
        let given = || format!("{request:?} for {numel} elements");
        let invalid = |expected: &str| Error::InvalidArgument {
            op: "reshape",
            expected: expected.to_string(),
            given: given(),
        };
        let mut infer = None;
        let mut known = 1usize;
        for (i, &d) in request.iter().enumerate() {
            match d {
                -1 if infer.is_some() => return Err(invalid("at most one -1 in the new shape")),
                -1 => infer = Some(i),
                d if d < 0 => return Err(invalid("sizes >= 0, or -1 for one inferred size")),
                d => {
                    known = usize::try_from(d)
                        .ok()
                        .and_then(|d| known.checked_mul(d))
                        .ok_or_else(|| Error::Overflow {
                            op: "reshape",
                            what: format!("the element count of {request:?} exceeds usize"),
                        })?
                }
            }
        }
        let mut dims: Vec<usize> = request.iter().map(|&d| d.max(0) as usize).collect();
        if let Some(i) = infer {
            if known == 0 || !numel.is_multiple_of(known) {
                return Err(Error::ShapeMismatch {
                    op: "reshape",
                    expected: format!(
                        "sizes whose product divides {numel} so that -1 can be inferred (the \
                         sizes other than -1 given)"
                    ),
                    got: vec![request
                        .iter()
                        .filter(|&&d| d >= 0)
                        .map(|&d| d as usize)
                        .collect()],
                });
            }
            dims[i] = numel / known;
        } else if known != numel {
            return Err(Error::ShapeMismatch {
                op: "reshape",
                expected: format!("a shape of {numel} elements, not of {known}"),
                got: vec![dims.clone()],
            });
        }
        Ok(TensorShape { dims })
    }
}

impl From<&[usize]> for TensorShape {
    fn from(dims: &[usize]) -> Self {
        TensorShape::new(dims)
    }
}

impl<const N: usize> From<[usize; N]> for TensorShape {
    fn from(dims: [usize; N]) -> Self {
        TensorShape::new(&dims)
    }
}

impl From<Vec<usize>> for TensorShape {
    fn from(dims: Vec<usize>) -> Self {
        TensorShape { dims }
    }
}

impl fmt::Display for TensorShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.dims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_infers_minus_one() {
        assert_eq!(
            TensorShape::resolve(24, &[2, -1, 4]).unwrap().dims(),
            [2, 3, 4]
        );
        assert_eq!(TensorShape::resolve(24, &[-1]).unwrap().dims(), [24]);
        assert_eq!(TensorShape::resolve(0, &[0, 5]).unwrap().dims(), [0, 5]);
        assert_eq!(
            TensorShape::resolve(1, &[]).unwrap().dims(),
            [] as [usize; 0]
        );
        assert_eq!(TensorShape::resolve(0, &[-1, 3]).unwrap().dims(), [0, 3]);
    }

    #[test]
    fn dim_size_is_checked() {
        let s = TensorShape::from([2, 5]);
        assert_eq!(
            (s.dim_size(1).unwrap(), s.numel(), s.to_string()),
            (5, 10, "[2, 5]".into())
        );
        let e = s.dim_size(2).unwrap_err();
        assert!(
            matches!(
                e,
                Error::OutOfRange {
                    op: "dim_size",
                    given: 2,
                    ..
                }
            ),
            "{e}"
        );
        assert_eq!(
            TensorShape::from([usize::MAX, 2]).numel(),
            usize::MAX,
            "numel saturates"
        );
        assert!(matches!(
            TensorShape::from([usize::MAX, 2]).checked_numel("t"),
            Err(Error::Overflow { .. })
        ));
    }

    #[test]
    fn resolve_failure_cases() {
        // 1. two -1
        assert!(matches!(
            TensorShape::resolve(24, &[-1, -1]),
            Err(Error::InvalidArgument { op: "reshape", .. })
        ));
        // 2. a negative size other than -1
        assert!(matches!(
            TensorShape::resolve(24, &[-2, 12]),
            Err(Error::InvalidArgument { op: "reshape", .. })
        ));
        // 3. -1 not inferable: 5 does not divide 24, or the other sizes multiply to 0
        assert!(matches!(
            TensorShape::resolve(24, &[5, -1]),
            Err(Error::ShapeMismatch { op: "reshape", .. })
        ));
        assert!(matches!(
            TensorShape::resolve(0, &[0, -1]),
            Err(Error::ShapeMismatch { op: "reshape", .. })
        ));
        // 4. element count differs
        let e = TensorShape::resolve(24, &[5, 5]).unwrap_err();
        assert!(matches!(e, Error::ShapeMismatch { op: "reshape", .. }));
        assert!(
            e.to_string().contains("24") && e.to_string().contains("25"),
            "{e}"
        );
        // overflow of the requested count
        assert!(matches!(
            TensorShape::resolve(24, &[i64::MAX, i64::MAX]),
            Err(Error::Overflow { .. })
        ));
    }
}
