//! The flags the BLAS and LAPACK kernels take: which operation of a matrix ([`Trans`]),
//! which side ([`Side`]), which triangle ([`Uplo`]), whether the diagonal is unit
//! ([`Diag`]) and whether eigenvectors are computed ([`Jobz`]). They live apart from both
//! families so that neither imports the other.

use std::fmt;
use std::str::FromStr;

use ctensor_base::{Error, Result};

/// `op(A)` of a BLAS routine: `A`, `Aᵀ` or `Aᴴ`. For real types `C` is the same as `T`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Trans {
    /// `op(A) = A` (`'N'`).
    N,
    /// `op(A) = Aᵀ` (`'T'`).
    T,
    /// `op(A) = Aᴴ` (`'C'`).
    C,
}

impl Trans {
    /// Parses a BLAS `trans` character: `N`, `T` or `C`, in either case.
    pub fn from_char(c: char) -> Result<Self> {
        match c {
            'N' | 'n' => Ok(Trans::N),
            'T' | 't' => Ok(Trans::T),
            'C' | 'c' => Ok(Trans::C),
            _ => Err(Error::UnknownName {
                kind: "BLAS trans",
                given: c.to_string(),
                expected: "N, T or C (either case)",
            }),
        }
    }

    /// The upper-case character LAPACK and BLAS take.
    pub fn as_char(self) -> char {
        match self {
            Trans::N => 'N',
            Trans::T => 'T',
            Trans::C => 'C',
        }
    }

    /// `(rows, cols)` of the stored matrix when `op(A)` is `rows × cols`.
    pub fn stored(self, rows: usize, cols: usize) -> (usize, usize) {
        match self {
            Trans::N => (rows, cols),
            Trans::T | Trans::C => (cols, rows),
        }
    }
}

impl FromStr for Trans {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        let mut chars = s.chars();
        match (chars.next(), chars.next()) {
            (Some(c), None) => Trans::from_char(c),
            _ => Err(Error::UnknownName {
                kind: "BLAS trans",
                given: s.to_string(),
                expected: "N, T or C (either case)",
            }),
        }
    }
}

impl TryFrom<char> for Trans {
    type Error = Error;
    fn try_from(c: char) -> Result<Self> {
        Trans::from_char(c)
    }
}

impl fmt::Display for Trans {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.as_char())
    }
}

/// Which side of `B` the triangular matrix of [`BlasTrsm`](crate::blas::BlasTrsm) stands on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// `op(A) X = alpha B`.
    Left,
    /// `X op(A) = alpha B`.
    Right,
}

/// Which triangle of a symmetric/Hermitian or triangular matrix is referenced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Uplo {
    /// The upper triangle (`'U'`).
    Upper,
    /// The lower triangle (`'L'`).
    Lower,
}

impl Uplo {
    /// Parses `U` or `L` in either case.
    pub fn from_char(c: char) -> Result<Self> {
        match c {
            'U' | 'u' => Ok(Uplo::Upper),
            'L' | 'l' => Ok(Uplo::Lower),
            _ => Err(Error::UnknownName {
                kind: "LAPACK uplo",
                given: c.to_string(),
                expected: "U or L (either case)",
            }),
        }
    }

    /// The character LAPACK takes.
    pub fn as_char(self) -> char {
        match self {
            Uplo::Upper => 'U',
            Uplo::Lower => 'L',
        }
    }
}

impl fmt::Display for Uplo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.as_char())
    }
}

/// Whether a triangular matrix has an implicit unit diagonal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Diag {
    /// The diagonal is stored (`'N'`).
    NonUnit,
    /// The diagonal is all ones and not referenced (`'U'`).
    Unit,
}

impl Diag {
    /// Parses `N` or `U` in either case.
    pub fn from_char(c: char) -> Result<Self> {
        match c {
            'N' | 'n' => Ok(Diag::NonUnit),
            'U' | 'u' => Ok(Diag::Unit),
            _ => Err(Error::UnknownName {
                kind: "LAPACK diag",
                given: c.to_string(),
                expected: "N or U (either case)",
            }),
        }
    }

    /// The character LAPACK takes.
    pub fn as_char(self) -> char {
        match self {
            Diag::NonUnit => 'N',
            Diag::Unit => 'U',
        }
    }
}

/// What an eigensolver computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Jobz {
    /// Eigenvalues only (`'N'`).
    ValuesOnly,
    /// Eigenvalues and eigenvectors (`'V'`).
    Vectors,
}

impl Jobz {
    /// Parses `N` or `V` in either case.
    pub fn from_char(c: char) -> Result<Self> {
        match c {
            'N' | 'n' => Ok(Jobz::ValuesOnly),
            'V' | 'v' => Ok(Jobz::Vectors),
            _ => Err(Error::UnknownName {
                kind: "LAPACK jobz",
                given: c.to_string(),
                expected: "N or V (either case)",
            }),
        }
    }

    /// The character LAPACK takes.
    pub fn as_char(self) -> char {
        match self {
            Jobz::ValuesOnly => 'N',
            Jobz::Vectors => 'V',
        }
    }
}
