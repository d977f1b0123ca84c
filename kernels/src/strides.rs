//! Index arithmetic for strided n-dimensional views, shared by every kernel that walks one.

/// The `(stride, size)` pairs of a view's dimensions longer than 1, by increasing
/// stride: what overlap and span checks walk.
pub fn sorted_dims(shape: &[usize], strides: &[usize]) -> Vec<(usize, usize)> {
    let mut dims: Vec<(usize, usize)> = shape
        .iter()
        .zip(strides)
        .filter(|(&d, _)| d > 1)
        .map(|(&d, &s)| (s, d))
        .collect();
    dims.sort_unstable();
    dims
}

/// Whether a strided view provably never reaches one element twice by the sorted-stride
/// rule: its strides, sorted (dimensions of size 1 dropped), each reach past the span of
/// the smaller ones. Every dense, padded, permuted or windowed layout passes; a view
/// with no elements passes; one whose span exceeds `usize` fails; one that fails may
/// still be one-to-one (shape `[3, 3]` with strides `[3, 2]`), which only an exact check
/// of its offsets can tell.
pub fn reach_past_smaller(shape: &[usize], strides: &[usize]) -> bool {
    if shape.contains(&0) {
        return true;
    }
    let dims = sorted_dims(shape, strides);
    // A span past usize (no valid view) fails the rule.
    let mut reach = 1usize;
    dims.iter().all(|&(stride, size)| {
        let ok = stride >= reach;
        match (size - 1)
            .checked_mul(stride)
            .and_then(|x| x.checked_add(reach))
        {
            Some(r) => reach = r,
            None => return false,
        }
        ok
    })
}

/// Calls `row(offsets, len, inner_strides)` once for every innermost row of the
/// `K` strided views that share `shape` (strides in elements, one slice per view).
///
/// Dimensions of size 1 are dropped and neighbouring dimensions that are contiguous in
/// *every* view are merged first, so a dense view is one row and a transposed one is
/// walked with the fewest calls. Nothing is called when `shape` has a zero; a rank-0
/// view is one row of length 1.
///
/// The caller guarantees `strides[k].len() == shape.len()` for every `k`.
pub fn walk_rows<const K: usize>(
    shape: &[usize],
    strides: [&[usize]; K],
    mut row: impl FnMut([usize; K], usize, [usize; K]),
) {
    if shape.contains(&0) {
        return;
    }
    // Innermost first.
    let mut dims: Vec<usize> = Vec::with_capacity(shape.len());
    let mut steps: Vec<[usize; K]> = Vec::with_capacity(shape.len());
    for d in (0..shape.len()).rev() {
        let n = shape[d];
        if n == 1 {
            continue;
        }
        let s: [usize; K] = std::array::from_fn(|k| strides[k][d]);
        if let (Some(inner_n), Some(inner_s)) = (dims.last_mut(), steps.last()) {
            if (0..K).all(|k| s[k] == inner_s[k].wrapping_mul(*inner_n)) {
                *inner_n *= n;
                continue;
            }
        }
        dims.push(n);
        steps.push(s);
    }
    if dims.is_empty() {
        row([0; K], 1, [1; K]);
        return;
    }
    let (len, inner) = (dims[0], steps[0]);
    let (outer_dims, outer_steps) = (&dims[1..], &steps[1..]);
    let mut idx = vec![0usize; outer_dims.len()];
    let mut off = [0usize; K];
    loop {
        row(off, len, inner);
        let mut d = 0;
        loop {
            if d == outer_dims.len() {
                return;
            }
            idx[d] += 1;
            for k in 0..K {
                off[k] += outer_steps[d][k];
            }
            if idx[d] < outer_dims[d] {
                break;
            }
            for k in 0..K {
                off[k] -= outer_steps[d][k] * outer_dims[d];
            }
            idx[d] = 0;
            d += 1;
        }
    }
}

/// Row-major (C order) strides of `shape`, in elements.
pub fn row_major_strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![0; shape.len()];
    let mut acc = 1usize;
    for d in (0..shape.len()).rev() {
        strides[d] = acc;
        acc = acc.wrapping_mul(shape[d].max(1));
    }
    strides
}

/// `true` when `strides` lay `shape` out densely in row-major order (axes of length 1
/// may have any stride), so the view is one contiguous run of `numel` elements.
pub fn is_row_major(shape: &[usize], strides: &[usize]) -> bool {
    is_dense_from_inner(shape.iter().zip(strides).rev().map(|(&d, &s)| (d, s)))
}

/// `true` when `strides` lay `shape` out densely in column-major order (axes of length 1
/// may have any stride).
pub fn is_col_major(shape: &[usize], strides: &[usize]) -> bool {
    is_dense_from_inner(shape.iter().zip(strides).map(|(&d, &s)| (d, s)))
}

/// `true` when the `(size, stride)` axes, innermost first, are dense: each stride the
/// product of the sizes inside it, axes of length 0 or 1 skipped. Allocates nothing (it
/// runs in every op's fast-path check).
pub fn is_dense_from_inner(axes: impl Iterator<Item = (usize, usize)>) -> bool {
    let mut want = 1usize;
    for (d, s) in axes {
        if d > 1 && s != want {
            return false;
        }
        want = want.wrapping_mul(d.max(1));
    }
    true
}

/// Column-major (Fortran order) strides of `shape`, in elements.
pub fn col_major_strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![0; shape.len()];
    let mut acc = 1usize;
    for (d, s) in strides.iter_mut().enumerate() {
        *s = acc;
        acc = acc.wrapping_mul(shape[d].max(1));
    }
    strides
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_major_views_are_recognised_whatever_their_unit_axes() {
        assert!(is_row_major(&[3, 4], &[4, 1]));
        assert!(
            is_row_major(&[3, 1, 4], &[4, 99, 1]),
            "a length-1 axis has any stride"
        );
        assert!(is_row_major(&[], &[]));
        assert!(!is_row_major(&[3, 4], &[1, 3]), "column-major");
        assert!(!is_row_major(&[3, 4], &[8, 1]), "padded rows");
    }

    fn offsets<const K: usize>(shape: &[usize], strides: [&[usize]; K]) -> Vec<[usize; K]> {
        let mut out = Vec::new();
        walk_rows(shape, strides, |off, len, inner| {
            for i in 0..len {
                out.push(std::array::from_fn(|k| off[k] + i * inner[k]));
            }
        });
        out
    }

    fn reference(shape: &[usize], strides: &[usize]) -> Vec<usize> {
        let n: usize = shape.iter().product();
        (0..n)
            .map(|mut flat| {
                let mut off = 0;
                for d in (0..shape.len()).rev() {
                    off += (flat % shape[d]) * strides[d];
                    flat /= shape[d];
                }
                off
            })
            .collect()
    }

    #[test]
    fn walk_rows_visits_row_major_order_for_any_strides() {
        let cases: [(&[usize], &[usize], &[usize]); 6] = [
            (&[2, 3, 4], &[12, 4, 1], &[1, 2, 6]),
            (&[5], &[3], &[1]),
            (&[3, 1, 2], &[2, 7, 1], &[1, 100, 3]),
            (&[4, 4], &[0, 1], &[4, 1]),
            (&[], &[], &[]),
            (&[2, 3, 2, 2], &[1, 2, 6, 12], &[12, 4, 2, 1]),
        ];
        for (shape, a, b) in cases {
            let got = offsets(shape, [a, b]);
            let (ra, rb) = (reference(shape, a), reference(shape, b));
            let want: Vec<[usize; 2]> = ra.into_iter().zip(rb).map(|(x, y)| [x, y]).collect();
            assert_eq!(got, want, "shape {shape:?}");
        }
    }

    #[test]
    fn walk_rows_merges_dense_views_into_one_row() {
        let mut calls = 0;
        walk_rows(&[4, 5, 6], [&[30, 6, 1]], |off, len, inner| {
            calls += 1;
            assert_eq!((off, len, inner), ([0], 120, [1]));
        });
        assert_eq!(calls, 1);
        walk_rows(&[3, 0, 2], [&[0, 2, 1]], |_, _, _| {
            panic!("empty view has no rows")
        });
    }

    #[test]
    fn strides_of_both_orders() {
        assert_eq!(row_major_strides(&[2, 3, 4]), [12, 4, 1]);
        assert_eq!(col_major_strides(&[2, 3, 4]), [1, 2, 6]);
        assert_eq!(row_major_strides(&[]), Vec::<usize>::new());
    }
}
