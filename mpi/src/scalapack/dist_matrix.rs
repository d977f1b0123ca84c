//! [`DistMatrix`]: a matrix distributed block-cyclically over a [`Grid`], as ScaLAPACK
//! stores it (Blackford et al., *ScaLAPACK Users' Guide*, SIAM 1997, §4.3): global
//! `mb × nb` blocks dealt round-robin to the grid's rows and columns, each rank's blocks
//! kept as one column-major local matrix.

use std::ffi::c_int;

use ctensor_aten::{Order, Tensor};
use ctensor_base::{DataType, DeviceType, Error, Result};

use super::ffi::{self, Desc};
use super::grid::Grid;
use crate::comm::{count, same_on_all};
use crate::wire::{with_read, with_write};

/// How many of `n` global rows (or columns) in blocks of `nb` the grid row (column)
/// `iproc` of `nprocs` holds: ScaLAPACK's `NUMROC` with the first block on process 0.
pub fn local_count(n: usize, nb: usize, iproc: usize, nprocs: usize) -> usize {
    let blocks = n / nb;
    let mut count = (blocks / nprocs) * nb;
    let extra = blocks % nprocs;
    if iproc < extra {
        count += nb;
    } else if iproc == extra {
        count += n % nb;
    }
    count
}

/// The global index of local index `l` on grid row (column) `iproc` of `nprocs`, blocks
/// of `nb`: ScaLAPACK's `INDXL2G`, 0-based.
pub fn global_index(l: usize, nb: usize, iproc: usize, nprocs: usize) -> usize {
    (l / nb * nprocs + iproc) * nb + l % nb
}

/// A `m × n` matrix distributed block-cyclically over a [`Grid`] in `mb × nb` blocks
/// (first block on grid process (0, 0)). Each rank holds its blocks as one column-major
/// host tensor ([`local`](Self::local)) with the leading dimension of its ScaLAPACK
/// descriptor ([`descriptor`](Self::descriptor)).
pub struct DistMatrix<'g> {
    grid: &'g Grid,
    dtype: DataType,
    m: usize,
    n: usize,
    mb: usize,
    nb: usize,
    /// At least one element (ScaLAPACK is handed a real address even for an empty local
    /// part); the local matrix is its leading `locr × locc` part.
    storage: Tensor,
    locr: usize,
    locc: usize,
    desc: Desc,
}

impl std::fmt::Debug for DistMatrix<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "DistMatrix({} × {} {} in {} × {} blocks; local {} × {} on {:?})",
            self.m, self.n, self.dtype, self.mb, self.nb, self.locr, self.locc, self.grid
        )
    }
}

impl<'g> DistMatrix<'g> {
    /// A zero `m × n` matrix of `dtype` in `mb × nb` blocks over `grid`. Not
    /// collective, but every rank of the grid makes it with the same arguments.
    ///
    /// Errors: `InvalidArgument` for a zero block size, `Overflow` for sizes beyond
    /// ScaLAPACK's C int indices.
    pub fn zeros(
        grid: &'g Grid,
        dtype: DataType,
        m: usize,
        n: usize,
        mb: usize,
        nb: usize,
    ) -> Result<Self> {
        const OP: &str = "DistMatrix::zeros";
        if mb == 0 || nb == 0 {
            return Err(Error::InvalidArgument {
                op: OP,
                expected: "block sizes of at least 1".into(),
                given: format!("{mb} × {nb}"),
            });
        }
        for v in [m, n, mb, nb] {
            count(OP, v)?;
        }
        let (nprow, npcol) = grid.shape();
        let (myrow, mycol) = grid.coords();
        let locr = local_count(m, mb, myrow, nprow);
        let locc = local_count(n, nb, mycol, npcol);
        count(
            OP,
            locr.checked_mul(locc).ok_or_else(|| Error::Overflow {
                op: OP,
                what: "local size".into(),
            })?,
        )?;
        let lld = locr.max(1);
        let storage =
            Tensor::new_in_order(dtype, DeviceType::Cpu, &[lld, locc.max(1)], Order::ColMajor)?;
        let mut desc: Desc = [0; 9];
        let mut info = 0;
        let (mi, ni, mbi, nbi, zero, ctxt, lldi) = (
            m as c_int,
            n as c_int,
            mb as c_int,
            nb as c_int,
            0,
            grid.context(),
            lld as c_int,
        );
        // SAFETY: `desc` has the 9 entries of a descriptor; every other argument is a
        // valid integer by reference.
        unsafe {
            ffi::descinit_(
                desc.as_mut_ptr(),
                &mi,
                &ni,
                &mbi,
                &nbi,
                &zero,
                &zero,
                &ctxt,
                &lldi,
                &mut info,
            )
        };
        if info != 0 {
            return Err(Error::Lapack {
                routine: "descinit",
                info: info.into(),
                detail: format!("argument {} of the descriptor of a {m} × {n} matrix in {mb} × {nb} blocks is illegal", -info),
            });
        }
        Ok(DistMatrix {
            grid,
            dtype,
            m,
            n,
            mb,
            nb,
            storage,
            locr,
            locc,
            desc,
        })
    }

    /// Distributes `a` (a matrix of any dtype, layout or device, given on the rank
    /// `root` only; `None` elsewhere) over `grid` in `mb × nb` blocks: the root packs
    /// each rank's blocks and one `MPI_Scatterv` delivers them. Collective.
    ///
    /// Errors (on every rank): as [`Comm::scatter`](crate::Comm::scatter) for the root
    /// and the `Some`/`None` pattern, `ShapeMismatch` when `a` is not a matrix, and the
    /// errors of [`zeros`](Self::zeros).
    pub fn scatter_from(
        grid: &'g Grid,
        a: Option<&Tensor>,
        root: usize,
        mb: usize,
        nb: usize,
    ) -> Result<Self> {
        const OP: &str = "DistMatrix::scatter_from";
        let comm = grid.comm();
        // The root's matrix in column-major host memory; every rank learns its shape and
        // dtype from the root's description.
        let local = comm.rooted_operand(OP, a, root, |a| match a.ndim() {
            2 => column_major_host(a),
            _ => Err(Error::NotAMatrix {
                op: OP,
                shape: a.dims().to_vec(),
                need: "a matrix (rank 2)",
            }),
        });
        let info = comm.agree_rooted(OP, &local, a, root)?;
        // The blocks decide every rank's part: ranks that disagree would exchange parts of
        // different sizes (and wait forever in a later solve), so they fail together here.
        let blocks = comm.allgather_words(OP, &[mb as i64, nb as i64])?;
        let blocks: Vec<&[i64]> = blocks.chunks(2).collect();
        same_on_all(OP, "block sizes (mb, nb)", &blocks)?;
        let (dtype, m, n) = (info.dtype, info.dims[0], info.dims[1]);
        // Allocations that can fail on one rank only are agreed on before any transfer.
        let out = comm.all_ok(DistMatrix::zeros(grid, dtype, m, n, mb, nb))?;
        let counts: Vec<usize> = (0..comm.size()).map(|r| out.local_len_of(r)).collect();
        let packed =
            comm.all_ok(local.and_then(|a| a.map(|a| out.pack(&a, &counts)).transpose()))?;
        comm.scatterv(OP, packed.as_ref(), &counts, &out.storage, root)?;
        Ok(out)
    }

    /// The whole matrix on rank `root` (`Some`, a column-major `m × n` host tensor),
    /// `None` elsewhere: one `MPI_Gatherv` of the local parts. Collective.
    pub fn gather_to(&self, root: usize) -> Result<Option<Tensor>> {
        const OP: &str = "DistMatrix::gather_to";
        let comm = self.grid.comm();
        let ok = root < comm.size();
        let verdicts = comm.allgather_words(OP, &[i64::from(ok), root as i64])?;
        let roots: Vec<i64> = verdicts.chunks(2).map(|w| w[1]).collect();
        same_on_all(OP, "root", &roots)?;
        if !ok {
            return Err(Error::OutOfRange {
                op: OP,
                what: "root rank".into(),
                given: root as i64,
                valid: format!("0..{}", comm.size()),
            });
        }
        let counts: Vec<usize> = (0..comm.size()).map(|r| self.local_len_of(r)).collect();
        let total: usize = counts.iter().sum();
        let recv = comm.all_ok(match comm.rank() == root {
            true => Tensor::new(self.dtype, DeviceType::Cpu, &[total.max(1)]).map(Some),
            false => Ok(None),
        })?;
        comm.gatherv(OP, &self.storage, &counts, recv.as_ref(), Some(root))?;
        recv.map(|r| self.unpack(&r, &counts)).transpose()
    }

    /// The global shape `(m, n)`.
    pub fn shape(&self) -> (usize, usize) {
        (self.m, self.n)
    }

    /// The block shape `(mb, nb)`.
    pub fn block(&self) -> (usize, usize) {
        (self.mb, self.nb)
    }

    /// The element type.
    pub fn dtype(&self) -> DataType {
        self.dtype
    }

    /// The grid.
    pub fn grid(&self) -> &'g Grid {
        self.grid
    }

    /// This rank's blocks: a column-major `locr × locc` host tensor (a view of the
    /// matrix's memory).
    pub fn local(&self) -> Result<Tensor> {
        self.storage
            .narrow(0, 0, self.locr)?
            .narrow(1, 0, self.locc)
    }

    /// The global `(row, column)` of this rank's local element `(i, j)`.
    pub fn to_global(&self, i: usize, j: usize) -> (usize, usize) {
        let (nprow, npcol) = self.grid.shape();
        let (myrow, mycol) = self.grid.coords();
        (
            global_index(i, self.mb, myrow, nprow),
            global_index(j, self.nb, mycol, npcol),
        )
    }

    /// The ScaLAPACK descriptor (`DESCA`), for ScaLAPACK calls of the caller's own.
    pub fn descriptor(&self) -> [i32; 9] {
        self.desc
    }

    /// A deep copy with the same distribution (ScaLAPACK overwrites its input).
    pub(crate) fn copy(&self) -> Result<DistMatrix<'g>> {
        let mut d = DistMatrix::zeros(self.grid, self.dtype, self.m, self.n, self.mb, self.nb)?;
        d.storage.sync(&self.storage)?;
        Ok(d)
    }

    pub(crate) fn storage(&self) -> &Tensor {
        &self.storage
    }

    /// The `m × n2` matrix of this one's first `n2 ≤ n` columns, in the same blocks (the
    /// eigenvectors of a partial spectrum). Block-cyclic order keeps a prefix of the
    /// global columns a prefix of every rank's local ones, so this is a local copy.
    pub(crate) fn first_columns(&self, n2: usize) -> Result<DistMatrix<'g>> {
        let mut d = DistMatrix::zeros(self.grid, self.dtype, self.m, n2, self.mb, self.nb)?;
        let cols = d.storage.dims()[1].min(self.storage.dims()[1]);
        d.storage.sync(&self.storage.narrow(1, 0, cols)?)?;
        Ok(d)
    }

    /// Calls `f(offset, global_row, global_col)` for every element of this rank's part,
    /// in local column-major order (`offset` in elements into the storage), which is
    /// also increasing global column, then row.
    pub(crate) fn for_each_local(&self, mut f: impl FnMut(usize, usize, usize)) {
        let lld = self.storage.dims()[0];
        for j in 0..self.locc {
            for i in 0..self.locr {
                let (gi, gj) = self.to_global(i, j);
                f(i + j * lld, gi, gj);
            }
        }
    }

    /// The number of local elements of rank `r` of the grid's communicator.
    fn local_len_of(&self, r: usize) -> usize {
        let (nprow, npcol) = self.grid.shape();
        let (pr, pc) = self.grid.coords_of(r).unwrap_or((0, 0));
        local_count(self.m, self.mb, pr, nprow) * local_count(self.n, self.nb, pc, npcol)
    }

    /// Calls `f(local_offset, global_offset, len)` for every run of consecutive local
    /// rows of rank `r`'s part (column-major: a run is ≤ mb elements of one column).
    fn runs_of(&self, r: usize, mut f: impl FnMut(usize, usize, usize)) {
        let (nprow, npcol) = self.grid.shape();
        let (pr, pc) = self.grid.coords_of(r).unwrap_or((0, 0));
        let locr = local_count(self.m, self.mb, pr, nprow);
        let locc = local_count(self.n, self.nb, pc, npcol);
        for lj in 0..locc {
            let gj = global_index(lj, self.nb, pc, npcol);
            let mut li = 0;
            while li < locr {
                let len = (self.mb - li % self.mb).min(locr - li);
                let gi = global_index(li, self.mb, pr, nprow);
                f(li + lj * locr, gi + gj * self.m, len);
                li += len;
            }
        }
    }

    /// The root's column-major matrix `a` cut into every rank's local part, in rank order.
    fn pack(&self, a: &Tensor, counts: &[usize]) -> Result<Tensor> {
        let total: usize = counts.iter().sum();
        let packed = Tensor::new(self.dtype, DeviceType::Cpu, &[total.max(1)])?;
        self.move_parts(a, &packed, counts, true)?;
        Ok(packed)
    }

    /// The inverse of [`pack`](Self::pack): every rank's part back into a column-major
    /// `m × n` matrix.
    fn unpack(&self, packed: &Tensor, counts: &[usize]) -> Result<Tensor> {
        let out = Tensor::new_in_order(
            self.dtype,
            DeviceType::Cpu,
            &[self.m, self.n],
            Order::ColMajor,
        )?;
        self.move_parts(packed, &out, counts, false)?;
        Ok(out)
    }

    /// Copies between the column-major global matrix and the ranks' packed local parts
    /// (`counts` elements each, in rank order): global → packed when `to_packed`.
    fn move_parts(
        &self,
        from: &Tensor,
        to: &Tensor,
        counts: &[usize],
        to_packed: bool,
    ) -> Result<()> {
        let e = self.dtype.size_of();
        with_read(from, "DistMatrix", |src| {
            with_write(to, "DistMatrix", |dst| {
                let mut base = 0;
                for (r, &c) in counts.iter().enumerate() {
                    self.runs_of(r, |l, g, len| {
                        let (global, packed) = (g * e, (base + l) * e);
                        let (at_src, at_dst) = if to_packed {
                            (global, packed)
                        } else {
                            (packed, global)
                        };
                        // SAFETY: `g + len ≤ m·n` inside the column-major m × n matrix and
                        // `base + l + len ≤ Σ counts` inside the packed parts, by the
                        // block-cyclic counts; the two buffers are distinct tensors.
                        unsafe {
                            std::ptr::copy_nonoverlapping(
                                src.cast::<u8>().add(at_src),
                                dst.cast::<u8>().add(at_dst),
                                len * e,
                            )
                        }
                    });
                    base += c;
                }
                Ok(())
            })
        })
    }
}

/// `a` as a column-major dense host tensor (itself when it already is one).
fn column_major_host(a: &Tensor) -> Result<Tensor> {
    let a = if a.device() == DeviceType::Cpu {
        a.share()
    } else {
        a.to_device(DeviceType::Cpu)?
    };
    if a.is_fortran_contiguous() {
        Ok(a)
    } else {
        // The transpose's row-major copy is `a` in column-major order.
        a.t()?.contiguous()?.t()
    }
}

/// ScaLAPACK's own `NUMROC` and `INDXL2G`, for tests of [`local_count`] and
/// [`global_index`] against the library.
#[doc(hidden)]
pub fn scalapack_numroc(n: usize, nb: usize, iproc: usize, nprocs: usize) -> usize {
    let (n, nb, ip, z, np) = (n as c_int, nb as c_int, iproc as c_int, 0, nprocs as c_int);
    // SAFETY: NUMROC only reads its integer arguments.
    unsafe { ffi::numroc_(&n, &nb, &ip, &z, &np) as usize }
}

/// See [`scalapack_numroc`]; ScaLAPACK's `INDXL2G` (1-based there, 0-based here).
#[doc(hidden)]
pub fn scalapack_indxl2g(l: usize, nb: usize, iproc: usize, nprocs: usize) -> usize {
    let (l1, nb, ip, z, np) = (
        l as c_int + 1,
        nb as c_int,
        iproc as c_int,
        0,
        nprocs as c_int,
    );
    // SAFETY: INDXL2G only reads its integer arguments.
    (unsafe { ffi::indxl2g_(&l1, &nb, &ip, &z, &np) } - 1) as usize
}
