//! `Display` for tensors, in NumPy's style: a header line with shape, dtype and device,
//! then nested brackets for any rank, complex numbers as `a+bi`, and the middle of big
//! tensors elided.

use std::fmt;

use ctensor_base::{Result, Scalar};

use super::dispatch::with_dtype;
use super::tensor::Tensor;

/// Tensors with more elements than this are summarised (NumPy's `threshold`).
const THRESHOLD: usize = 1000;
/// Entries shown at each end of a summarised dimension (NumPy's `edgeitems`).
const EDGE: usize = 3;
/// Digits after the point (PyTorch's default print precision).
const PRECISION: usize = 4;

/// How real numbers are written: fixed-point, or scientific when the magnitudes call for it.
#[derive(Clone, Copy)]
enum Notation {
    Fixed,
    Scientific,
}

fn notation(values: impl Iterator<Item = f64>) -> Notation {
    let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
    for v in values.filter(|v| v.is_finite() && *v != 0.0).map(f64::abs) {
        lo = lo.min(v);
        hi = hi.max(v);
    }
    if hi >= 1e8 || lo < 1e-4 {
        Notation::Scientific
    } else {
        Notation::Fixed
    }
}

fn real(x: f64, n: Notation) -> String {
    if x.is_nan() {
        "nan".into()
    } else if x.is_infinite() {
        if x > 0.0 { "inf" } else { "-inf" }.into()
    } else {
        match n {
            Notation::Fixed => format!("{x:.PRECISION$}"),
            Notation::Scientific => format!("{x:.PRECISION$e}"),
        }
    }
}

/// The text of each shown element, in row-major order of the shown indices.
fn cells<T: Scalar>(t: &Tensor, shown: &[Vec<usize>], elided: bool) -> Result<Vec<String>> {
    let values: Vec<T> = if elided {
        // Only the shown elements are read, so printing a huge tensor copies little.
        let count: usize = shown.iter().map(Vec::len).product();
        let mut at = vec![0usize; shown.len()];
        (0..count)
            .map(|mut k| {
                for (d, entries) in shown.iter().enumerate().rev() {
                    at[d] = entries[k % entries.len()];
                    k /= entries.len();
                }
                t.get_value::<T>(&at)
            })
            .collect::<Result<_>>()?
    } else {
        t.to_vec::<T>()?
    };
    let dtype = T::DTYPE;
    Ok(if dtype.is_integer() {
        values.iter().map(|v| v.to_string()).collect()
    } else if dtype.is_complex() {
        let z: Vec<_> = values.iter().map(|v| v.to_c64()).collect();
        let n = notation(z.iter().flat_map(|z| [z.re, z.im]));
        z.iter()
            .map(|z| {
                let sign = if z.im.is_sign_negative() && !z.im.is_nan() {
                    '-'
                } else {
                    '+'
                };
                format!("{}{sign}{}i", real(z.re, n), real(z.im.abs(), n))
            })
            .collect()
    } else {
        let x: Vec<f64> = values.iter().map(|v| v.to_c64().re).collect();
        let n = notation(x.iter().copied());
        x.iter().map(|&v| real(v, n)).collect()
    })
}

struct Layout<'a> {
    cells: &'a [String],
    /// Per dimension, the shown entries; `None` marks the elision.
    shown: &'a [Vec<Option<usize>>],
    width: usize,
}

impl Layout<'_> {
    fn write(&self, out: &mut String, dim: usize, pos: &mut usize) {
        let last = self.shown.len() - 1;
        out.push('[');
        for (k, entry) in self.shown[dim].iter().enumerate() {
            if k > 0 {
                if dim == last {
                    out.push_str(", ");
                } else {
                    out.push(',');
                    out.push_str(&"\n".repeat(last - dim));
                    out.push_str(&" ".repeat(dim + 1));
                }
            }
            match entry {
                None => out.push_str("..."),
                Some(_) if dim == last => {
                    out.push_str(&format!("{:>w$}", self.cells[*pos], w = self.width));
                    *pos += 1;
                }
                Some(_) => self.write(out, dim + 1, pos),
            }
        }
        out.push(']');
    }
}

fn render(t: &Tensor) -> Result<String> {
    let elided = t.numel() > THRESHOLD;
    // An empty tensor has no values but may have huge other axes (shape [2⁴⁰, 0]): elide
    // those too, so nothing is built per index of an axis.
    let elide_axes = elided || t.numel() == 0;
    let shown: Vec<Vec<Option<usize>>> = t
        .dims()
        .iter()
        .map(|&d| {
            if elide_axes && d > 2 * EDGE {
                (0..EDGE)
                    .map(Some)
                    .chain([None])
                    .chain((d - EDGE..d).map(Some))
                    .collect()
            } else {
                (0..d).map(Some).collect()
            }
        })
        .collect();
    let indices: Vec<Vec<usize>> = shown
        .iter()
        .map(|s| s.iter().flatten().copied().collect())
        .collect();
    let cells = with_dtype!(t.dtype(), T => cells::<T>(t, &indices, elided))?;
    if t.ndim() == 0 {
        return Ok(cells.into_iter().next().unwrap_or_default());
    }
    let width = cells.iter().map(String::len).max().unwrap_or(0);
    let mut out = String::new();
    Layout {
        cells: &cells,
        shown: &shown,
        width,
    }
    .write(&mut out, 0, &mut 0);
    Ok(out)
}

impl fmt::Display for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "Tensor(shape={}, dtype={}, device={})",
            self.shape(),
            self.dtype(),
            self.device()
        )?;
        match render(self) {
            Ok(s) => f.write_str(&s),
            Err(e) => write!(f, "[values unavailable: {e}]"),
        }
    }
}
