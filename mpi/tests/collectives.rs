//! Tensors over MPI: every collective and point-to-point call, for every dtype, on 2 and
//! 3 ranks, against what the ranks sent (each rank regenerates every other rank's data,
//! so the reference is a plain loop over the same values). The values are quarter
//! integers small enough to be exact in every dtype, f16 and bf16 included, so results
//! are compared exactly. Each reduction test also runs with a message limit of 7
//! elements, so the chunked path runs too.

mod common;

use ctensor_aten::{DataType, DeviceType, Order, Tensor};
use ctensor_base::{c64, Error, Result};
use ctensor_mpi::{block_counts, split_pools, Comm, ReduceOp};

const SMALL_MESSAGES: &[&[(&str, &str)]] = &[&[("CTENSOR_MPI_MAX_COUNT", "7")]];

/// Shapes that break libraries: 0-d, empty, one element, odd, > 256, empty in the
/// middle, and empty with a huge other dimension.
const SHAPES: &[&[usize]] = &[
    &[],
    &[0],
    &[1],
    &[7],
    &[3, 5],
    &[300],
    &[2, 0, 3],
    &[0, 1 << 40],
];

/// Rank `rank`'s operand: quarter integers in [-11, 11.75] (exact in every dtype; sums of
/// three stay exact in bf16's 8-bit significand).
fn data(dtype: DataType, dims: &[usize], rank: usize, salt: usize) -> Result<Tensor> {
    let n: usize = dims.iter().product();
    let v: Vec<c64> = (0..n)
        .map(|i| {
            let re =
                ((rank * 31 + i * 7 + salt) % 23) as f64 - 11.0 + 0.25 * ((i + rank) % 4) as f64;
            let im = ((rank * 13 + i * 5 + salt) % 19) as f64 - 9.0;
            c64::new(re, im)
        })
        .collect();
    Tensor::from_slice(&v, &[n])?
        .reshape(&dims.iter().map(|&d| d as i64).collect::<Vec<_>>())?
        .cast(dtype)
}

/// Exact equality of dtype, shape and values (NaN equal to NaN).
fn same(what: &str, got: &Tensor, want: &Tensor) -> Result<()> {
    assert_eq!(got.dtype(), want.dtype(), "{what}: dtype");
    assert_eq!(got.dims(), want.dims(), "{what}: shape");
    let (g, w) = (
        got.cast(DataType::ComplexDouble)?.to_vec::<c64>()?,
        want.cast(DataType::ComplexDouble)?.to_vec::<c64>()?,
    );
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        let eq = |x: f64, y: f64| x == y || (x.is_nan() && y.is_nan());
        assert!(
            eq(a.re, b.re) && eq(a.im, b.im),
            "{what}: element {i}: got {a}, expected {b}"
        );
    }
    Ok(())
}

/// `x` laid out three ways with the same values: dense row-major, column-major, and a
/// strided view into a wider tensor.
fn layouts(x: &Tensor) -> Result<Vec<(&'static str, Tensor)>> {
    let mut out = vec![("row-major", x.try_clone()?)];
    if x.ndim() >= 2 {
        let mut cm = Tensor::new_in_order(x.dtype(), DeviceType::Cpu, x.dims(), Order::ColMajor)?;
        cm.sync(x)?;
        assert!(x.numel() <= 1 || !cm.is_contiguous());
        out.push(("column-major", cm));
    }
    if x.ndim() >= 1 {
        let mut wide = x.dims().to_vec();
        let last = wide.len() - 1;
        wide[last] += 2;
        let big = Tensor::zeros(x.dtype(), DeviceType::Cpu, &wide)?;
        let mut view = big.narrow(last, 1, x.dims()[last])?;
        view.sync(x)?;
        out.push(("strided view", view));
    }
    Ok(out)
}

fn sum_over_ranks(dtype: DataType, dims: &[usize], size: usize, salt: usize) -> Result<Tensor> {
    let mut acc = Tensor::zeros(dtype, DeviceType::Cpu, dims)?;
    for r in 0..size {
        acc = acc.add(&data(dtype, dims, r, salt)?)?;
    }
    Ok(acc)
}

mpi_test!(
    allreduce_and_reduce_sum_every_dtype_layout_and_size,
    [2, 3],
    SMALL_MESSAGES,
    |w| {
        for dtype in DataType::ALL {
            for dims in SHAPES {
                let x = data(dtype, dims, w.rank(), 1)?;
                let want = sum_over_ranks(dtype, dims, w.size(), 1)?;
                for (layout, v) in layouts(&x)? {
                    let what = format!("allreduce {dtype} {dims:?} {layout}");
                    same(&what, &w.allreduce(&v, ReduceOp::Sum)?, &want)?;
                    // The operand itself is left alone.
                    same(&format!("{what}: operand"), &v, &x)?;
                    let mut inplace = v.share();
                    w.allreduce_(&mut inplace, ReduceOp::Sum)?;
                    same(&format!("{what} in place"), &v, &want)?;
                }
                let root = w.size() - 1;
                match w.reduce(&x, ReduceOp::Sum, root)? {
                    Some(r) => {
                        assert_eq!(w.rank(), root);
                        same(&format!("reduce {dtype} {dims:?}"), &r, &want)?;
                    }
                    None => assert_ne!(w.rank(), root),
                }
            }
        }
        Ok(())
    }
);

mpi_test!(
    max_and_min_propagate_nan_and_refuse_complex,
    [2, 3],
    SMALL_MESSAGES,
    |w| {
        for dtype in [
            DataType::Float,
            DataType::Double,
            DataType::Int,
            DataType::Int64,
            DataType::Half,
            DataType::BFloat16,
        ] {
            let n = 11;
            let x = data(dtype, &[n], w.rank(), 5)?;
            if dtype.is_float() && w.rank() == 1 {
                // NaN on one rank only: it must win wherever its rank sits in MPI's order.
                let nan = Tensor::full(f64::NAN, DeviceType::Cpu, &[1])?.cast(dtype)?;
                x.narrow(0, 2, 1)?.sync(&nan)?;
            }
            for op in [ReduceOp::Max, ReduceOp::Min] {
                let got = w
                    .allreduce(&x, op)?
                    .cast(DataType::Double)?
                    .to_vec::<f64>()?;
                for (i, g) in got.iter().enumerate() {
                    let vals: Vec<f64> = (0..w.size())
                        .map(|r| {
                            data(dtype, &[n], r, 5)
                                .and_then(|t| t.cast(DataType::Double)?.get_value::<f64>(&[i]))
                        })
                        .collect::<Result<_>>()?;
                    let want = if i == 2 && dtype.is_float() {
                        f64::NAN
                    } else if op == ReduceOp::Max {
                        vals.iter().cloned().fold(f64::MIN, f64::max)
                    } else {
                        vals.iter().cloned().fold(f64::MAX, f64::min)
                    };
                    assert!(
                        *g == want || (g.is_nan() && want.is_nan()),
                        "{op:?} {dtype} [{i}]: got {g}, expected {want}"
                    );
                }
            }
        }
        let c = data(DataType::ComplexDouble, &[3], w.rank(), 0)?;
        match w.allreduce(&c, ReduceOp::Max) {
            Err(Error::UnsupportedDType {
                op: "allreduce", ..
            }) => {}
            other => panic!("complex max: expected UnsupportedDType on every rank, got {other:?}"),
        }
        // Every rank is still in step.
        same(
            "after the refusal",
            &w.allreduce(&c, ReduceOp::Sum)?,
            &sum_over_ranks(DataType::ComplexDouble, &[3], w.size(), 0)?,
        )
    }
);

mpi_test!(
    bcast_and_bcast_into_every_dtype_and_layout,
    [2, 3],
    SMALL_MESSAGES,
    |w| {
        let root = w.size() - 1;
        for dtype in DataType::ALL {
            for dims in SHAPES {
                let src = data(dtype, dims, root, 2)?;
                let mine = if w.rank() == root { Some(&src) } else { None };
                same(
                    &format!("bcast {dtype} {dims:?}"),
                    &w.bcast(mine, root, DeviceType::Cpu)?,
                    &src,
                )?;
                let own = if w.rank() == root {
                    src.try_clone()?
                } else {
                    Tensor::zeros(dtype, DeviceType::Cpu, dims)?
                };
                for (layout, mut v) in layouts(&own)? {
                    w.bcast_into(&mut v, root)?;
                    same(&format!("bcast_into {dtype} {dims:?} {layout}"), &v, &src)?;
                }
            }
        }
        Ok(())
    }
);

mpi_test!(
    gather_and_allgather_uneven_rows_every_dtype,
    [2, 3],
    &[],
    |w| {
        for dtype in DataType::ALL {
            for rest in [&[][..], &[3][..], &[2, 5][..], &[0, 1 << 40][..]] {
                // Rank r holds 2r rows (none on rank 0) ...
                let dims_of = |r: usize| [&[2 * r][..], rest].concat();
                let x = data(dtype, &dims_of(w.rank()), w.rank(), 3)?;
                // ... and the result is every rank's rows in rank order.
                let parts: Vec<Tensor> = (0..w.size())
                    .map(|r| data(dtype, &dims_of(r), r, 3))
                    .collect::<Result<_>>()?;
                let want = ctensor_aten::cat(&parts.iter().collect::<Vec<_>>(), 0)?;
                for (layout, v) in layouts(&x)? {
                    let what = format!("allgather {dtype} rest {rest:?} {layout}");
                    same(&what, &w.allgather(&v)?, &want)?;
                    match w.gather(&v, 1)? {
                        Some(g) => same(&format!("gather {dtype} {rest:?} {layout}"), &g, &want)?,
                        None => assert_ne!(w.rank(), 1),
                    }
                }
            }
            // A 0-d tensor counts as one row.
            let s = data(dtype, &[], w.rank(), 4)?;
            let want: Vec<Tensor> = (0..w.size())
                .map(|r| data(dtype, &[1], r, 4))
                .collect::<Result<_>>()?;
            same(
                "allgather of scalars",
                &w.allgather(&s)?,
                &ctensor_aten::cat(&want.iter().collect::<Vec<_>>(), 0)?,
            )?;
        }
        Ok(())
    }
);

mpi_test!(scatter_splits_rows_by_block_counts, [2, 3], &[], |w| {
    let root = 0;
    for dtype in DataType::ALL {
        for n in [0usize, 1, 2, 7, 300] {
            let full = data(dtype, &[n, 3], 9, 6)?;
            let mine = if w.rank() == root { Some(&full) } else { None };
            let got = w.scatter(mine, root, DeviceType::Cpu)?;
            let counts = block_counts(n, w.size());
            let start: usize = counts[..w.rank()].iter().sum();
            let want = full.narrow(0, start, counts[w.rank()])?.contiguous()?;
            same(&format!("scatter {dtype} n {n}"), &got, &want)?;
        }
    }
    Ok(())
});

mpi_test!(alltoall_exchanges_blocks, [2, 3], &[], |w| {
    let p = w.size();
    for dtype in DataType::ALL {
        for m in [0usize, 1, 4] {
            let x = data(dtype, &[p * m, 2], w.rank(), 7)?;
            let got = w.alltoall(&x)?;
            // Block s of the result is block `rank` of rank s's operand.
            let blocks: Vec<Tensor> = (0..p)
                .map(|s| data(dtype, &[p * m, 2], s, 7)?.narrow(0, w.rank() * m, m))
                .collect::<Result<_>>()?;
            same(
                &format!("alltoall {dtype} m {m}"),
                &got,
                &ctensor_aten::cat(&blocks.iter().collect::<Vec<_>>(), 0)?,
            )?;
        }
    }
    let odd = data(DataType::Double, &[p + 1], w.rank(), 0)?;
    match w.alltoall(&odd) {
        Err(Error::ShapeMismatch { op: "alltoall", .. }) => Ok(()),
        other => panic!(
            "alltoall of {} rows on {p} ranks: expected ShapeMismatch, got {other:?}",
            p + 1
        ),
    }
});

/// Sends around the ring (rank r to r + 1): even ranks send first, odd ranks receive
/// first, so no two ranks wait on each other.
fn ring(w: &Comm, x: &Tensor, tag: u32, into: Option<&mut Tensor>) -> Result<Option<Tensor>> {
    let (next, prev) = (
        (w.rank() + 1) % w.size(),
        (w.rank() + w.size() - 1) % w.size(),
    );
    let mut got = None;
    let mut into = into;
    let mut receive = |w: &Comm| -> Result<()> {
        match into.as_deref_mut() {
            Some(t) => w.recv_into(t, prev, tag),
            None => {
                got = Some(w.recv(prev, tag, DeviceType::Cpu)?);
                Ok(())
            }
        }
    };
    if w.rank().is_multiple_of(2) {
        w.send(x, next, tag)?;
        receive(w)?;
    } else {
        receive(w)?;
        w.send(x, next, tag)?;
    }
    Ok(got)
}

mpi_test!(
    send_and_recv_around_a_ring_every_dtype_and_layout,
    [2, 3],
    SMALL_MESSAGES,
    |w| {
        let prev = (w.rank() + w.size() - 1) % w.size();
        for (k, dtype) in DataType::ALL.into_iter().enumerate() {
            for dims in SHAPES {
                let x = data(dtype, dims, w.rank(), 8)?;
                let want = data(dtype, dims, prev, 8)?;
                for (layout, v) in layouts(&x)? {
                    let got = ring(w, &v, k as u32, None)?.expect("received");
                    same(&format!("recv {dtype} {dims:?} from {layout}"), &got, &want)?;
                    let zeros = Tensor::zeros(dtype, DeviceType::Cpu, dims)?;
                    for (dest_layout, mut dest) in layouts(&zeros)? {
                        ring(w, &v, 100 + k as u32, Some(&mut dest))?;
                        same(
                            &format!("recv_into {dest_layout} {dtype} {dims:?} from {layout}"),
                            &dest,
                            &want,
                        )?;
                    }
                }
            }
        }
        Ok(())
    }
);

/// Checks that every rank got an error of the expected kind, then that all are still in
/// step (a small allreduce everyone reaches).
fn all_failed(
    w: &Comm,
    what: &str,
    r: Result<impl std::fmt::Debug>,
    ok: impl Fn(&Error) -> bool,
) -> Result<()> {
    match r {
        Err(e) if ok(&e) => {
            if w.rank() == 0 {
                println!("rank 0: {what}: {e}");
            }
        }
        other => panic!("{what}: rank {}: unexpected {other:?}", w.rank()),
    }
    let one = Tensor::ones(DataType::Int, DeviceType::Cpu, &[1])?;
    assert_eq!(
        w.allreduce(&one, ReduceOp::Sum)?.item::<i32>()?,
        w.size() as i32,
        "{what}: out of step"
    );
    Ok(())
}

mpi_test!(
    disagreements_are_errors_on_every_rank_never_hangs,
    [2, 3],
    &[],
    |w| {
        let last = w.size() - 1;
        let mismatch = |what: &'static str| move |e: &Error| matches!(e, Error::RanksDisagree { what: w2, rank, .. } if *w2 == what && *rank >= 1);
        // Shape, dtype and reduction differ on the last rank.
        let n = if w.rank() == last { 4 } else { 3 };
        all_failed(
            w,
            "allreduce, shapes differ",
            w.allreduce(
                &Tensor::zeros(DataType::Double, DeviceType::Cpu, &[n])?,
                ReduceOp::Sum,
            ),
            mismatch("shape"),
        )?;
        let dt = if w.rank() == last {
            DataType::Float
        } else {
            DataType::Double
        };
        all_failed(
            w,
            "allreduce, dtypes differ",
            w.allreduce(&Tensor::zeros(dt, DeviceType::Cpu, &[3])?, ReduceOp::Sum),
            mismatch("data type"),
        )?;
        let op = if w.rank() == last {
            ReduceOp::Max
        } else {
            ReduceOp::Sum
        };
        all_failed(
            w,
            "allreduce, reductions differ",
            w.allreduce(&Tensor::zeros(DataType::Double, DeviceType::Cpu, &[3])?, op),
            mismatch("reduction"),
        )?;
        let root = usize::from(w.rank() == last);
        all_failed(
            w,
            "reduce, roots differ",
            w.reduce(
                &Tensor::zeros(DataType::Double, DeviceType::Cpu, &[3])?,
                ReduceOp::Sum,
                root,
            ),
            mismatch("root"),
        )?;
        let rest = if w.rank() == last {
            vec![2, 2]
        } else {
            vec![2, 3]
        };
        all_failed(
            w,
            "allgather, trailing dims differ",
            w.allgather(&Tensor::zeros(DataType::Int, DeviceType::Cpu, &rest)?),
            mismatch("trailing dimensions (all but the leading axis)"),
        )?;
        let mut t = Tensor::zeros(DataType::Int, DeviceType::Cpu, &[n])?;
        all_failed(
            w,
            "bcast_into, shapes differ",
            w.bcast_into(&mut t, 0),
            mismatch("shape"),
        )?;
        // A root outside the communicator on one rank: that rank says why, the others that
        // it could not take part.
        let root = if w.rank() == 0 { w.size() } else { 0 };
        let x = Tensor::zeros(DataType::Double, DeviceType::Cpu, &[2])?;
        let r = w.reduce(&x, ReduceOp::Sum, root);
        all_failed(w, "reduce, bad root on rank 0", r, |e| {
            if w.rank() == 0 {
                matches!(e, Error::OutOfRange { .. })
            } else {
                matches!(e, Error::Mpi { .. })
            }
        })?;
        // A tensor on a non-root rank of a bcast (the last rank; 0 is the root).
        let given = (w.rank() == last || w.rank() == 0).then_some(&x);
        all_failed(
            w,
            "bcast, a tensor on a non-root",
            w.bcast(given, 0, DeviceType::Cpu),
            |e| matches!(e, Error::InvalidArgument { .. } | Error::Mpi { .. }),
        )?;
        // A receiver that expects another shape: sender and receiver both fail.
        if w.rank() < 2 {
            let peer = 1 - w.rank();
            let r = if w.rank() == 0 {
                w.send(
                    &Tensor::zeros(DataType::Double, DeviceType::Cpu, &[3])?,
                    peer,
                    5,
                )
            } else {
                w.recv_into(
                    &mut Tensor::zeros(DataType::Double, DeviceType::Cpu, &[4])?,
                    peer,
                    5,
                )
            };
            match r {
                Err(Error::RanksDisagree { .. }) => {}
                other => panic!(
                    "send/recv_into of different shapes: rank {}: got {other:?}",
                    w.rank()
                ),
            }
            match w.send(&x, peer, ctensor_mpi::MAX_TAG + 1) {
                Err(Error::OutOfRange { .. }) => {}
                other => panic!("tag above MAX_TAG: got {other:?}"),
            }
            // A sender that cannot send (17 dimensions) still tells the receiver.
            let r = if w.rank() == 0 {
                let deep = Tensor::zeros(
                    DataType::Int,
                    DeviceType::Cpu,
                    &[1; ctensor_mpi::MAX_DIMS + 1],
                )?;
                w.send(&deep, peer, 6).map(|_| ())
            } else {
                w.recv(peer, 6, DeviceType::Cpu).map(|_| ())
            };
            match (w.rank(), r) {
                (0, Err(Error::Unsupported { .. })) => {}
                (1, Err(Error::Mpi { detail, .. })) if detail.contains("could not send") => {}
                (rank, other) => panic!("send of 17 dimensions: rank {rank}: got {other:?}"),
            }
        }
        // Too many dimensions for the fixed description.
        let deep = Tensor::zeros(
            DataType::Int,
            DeviceType::Cpu,
            &[1; ctensor_mpi::MAX_DIMS + 1],
        )?;
        all_failed(
            w,
            "allreduce, 17 dimensions",
            w.allreduce(&deep, ReduceOp::Sum),
            |e| matches!(e, Error::Unsupported { .. }),
        )
    }
);

mpi_test!(
    pools_split_consecutive_ranks_and_reduce_across,
    [2, 3],
    &[],
    |w| {
        for npools in 1..=w.size() {
            let pools = match split_pools(w, npools) {
                Ok(p) => p,
                Err(Error::InvalidArgument { .. }) if !w.size().is_multiple_of(npools) => continue,
                Err(e) => return Err(e),
            };
            let per = w.size() / npools;
            assert_eq!(
                (
                    pools.index,
                    pools.count,
                    pools.pool.size(),
                    pools.across.size()
                ),
                (w.rank() / per, npools, per, npools)
            );
            assert_eq!(pools.pool.rank(), w.rank() % per);
            // Each pool sums its k-points; the sums across pools give the world's total.
            let k = ctensor_mpi::distribute(0..10, &pools.pool);
            let part = Tensor::full(k.map(|i| i as f64).sum::<f64>(), DeviceType::Cpu, &[1])?;
            let pool_sum = pools.pool.allreduce(&part, ReduceOp::Sum)?.item::<f64>()?;
            assert_eq!(pool_sum, 45.0);
            let total = pools.across.allreduce(
                &Tensor::full(pool_sum, DeviceType::Cpu, &[1])?,
                ReduceOp::Sum,
            )?;
            assert_eq!(total.item::<f64>()?, 45.0 * npools as f64);
        }
        match split_pools(w, w.size() + 1) {
            Err(Error::InvalidArgument { .. }) => {}
            other => panic!("more pools than ranks: got {other:?}"),
        }
        // A color beyond a C int on the last rank: every rank gets the error.
        let color = if w.rank() == w.size() - 1 { 1 << 40 } else { 0 };
        match w.split(color, 0) {
            Err(Error::Overflow { op: "split", .. }) => Ok(()),
            other => panic!(
                "split with a color past C int: rank {}: got {other:?}",
                w.rank()
            ),
        }
    }
);

/// This process's virtual memory size in bytes (Linux's /proc).
fn vm_size() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmSize:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// Runs `f` with this process's address space capped at 64 MiB above what it uses now
/// (so a larger allocation fails), and the old limit restored after.
fn with_little_memory<R>(f: impl FnOnce() -> R) -> R {
    let mut old = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit on this process with valid pointers.
    unsafe {
        libc::getrlimit(libc::RLIMIT_AS, &mut old);
        let cap = libc::rlimit {
            rlim_cur: vm_size() + (64 << 20),
            rlim_max: old.rlim_max,
        };
        libc::setrlimit(libc::RLIMIT_AS, &cap);
    }
    let r = f();
    // SAFETY: as above; raising the soft limit back to the old one is allowed.
    unsafe { libc::setrlimit(libc::RLIMIT_AS, &old) };
    r
}

mpi_test!(
    an_allocation_that_fails_on_one_rank_fails_every_rank,
    [2, 3],
    &[],
    |w| {
        // Every rank sends 48 MiB; the root's 96-144 MiB result does not fit under its cap.
        let x = Tensor::zeros(DataType::Double, DeviceType::Cpu, &[6 << 20])?;
        let r = if w.rank() == 0 {
            with_little_memory(|| w.gather(&x, 0))
        } else {
            w.gather(&x, 0)
        };
        all_failed(w, "gather, the root cannot allocate", r, |e| {
            if w.rank() == 0 {
                matches!(e, Error::Alloc { .. })
            } else {
                matches!(e, Error::Mpi { .. })
            }
        })?;
        let r = if w.rank() == 1 {
            with_little_memory(|| w.allgather(&x))
        } else {
            w.allgather(&x)
        };
        all_failed(w, "allgather, rank 1 cannot allocate", r, |e| {
            if w.rank() == 1 {
                matches!(e, Error::Alloc { .. })
            } else {
                matches!(e, Error::Mpi { .. })
            }
        })?;
        // A receiver that cannot make room refuses the message; the sender learns it.
        let big = Tensor::zeros(DataType::Double, DeviceType::Cpu, &[12 << 20])?;
        match w.rank() {
            0 => match w.send(&big, 1, 9) {
                Err(Error::Mpi { detail, .. }) if detail.contains("could not make room") => {}
                other => panic!("send to a receiver without room: got {other:?}"),
            },
            1 => match with_little_memory(|| w.recv(0, 9, DeviceType::Cpu)) {
                Err(Error::Alloc { .. }) => {}
                other => panic!("recv without room: got {other:?}"),
            },
            _ => {}
        }
        let one = Tensor::ones(DataType::Int, DeviceType::Cpu, &[1])?;
        assert_eq!(
            w.allreduce(&one, ReduceOp::Sum)?.item::<i32>()?,
            w.size() as i32
        );
        Ok(())
    }
);

mpi_test!(all_ok_fails_every_rank_when_one_fails, [2, 3], &[], |w| {
    assert_eq!(w.all_ok(Ok::<_, Error>(w.rank()))?, w.rank());
    let last = w.size() - 1;
    let local: Result<()> = if w.rank() == last {
        Err(Error::InvalidArgument {
            op: "test",
            expected: "nothing".into(),
            given: "a failure".into(),
        })
    } else {
        Ok(())
    };
    match (w.rank() == last, w.all_ok(local)) {
        (true, Err(Error::InvalidArgument { op: "test", .. })) => {}
        (
            false,
            Err(Error::Mpi {
                op: "all_ok",
                detail,
            }),
        ) => assert!(detail.contains(&format!("rank {last}")), "{detail}"),
        (_, other) => panic!("rank {}: got {other:?}", w.rank()),
    }
    Ok(())
});

mpi_test!(gpu_tensors_travel_staged_or_direct, [2], &[], |w| {
    if !ctensor_aten::gpu_available() {
        if w.rank() == 0 {
            println!("SKIP: no usable GPU here (GPU tensors over MPI run on a GPU machine)");
        }
        return Ok(());
    }
    for dtype in DataType::ALL {
        let x = data(dtype, &[300], w.rank(), 1)?.to_device(DeviceType::Gpu)?;
        let got = w.allreduce(&x, ReduceOp::Sum)?;
        assert_eq!(got.device(), DeviceType::Gpu);
        same(
            &format!("GPU allreduce {dtype}"),
            &got.to_device(DeviceType::Cpu)?,
            &sum_over_ranks(dtype, &[300], w.size(), 1)?,
        )?;
        let g = w.allgather(&x)?;
        assert_eq!(g.device(), DeviceType::Gpu);
    }
    Ok(())
});
