//! One rank's mistake must not hang the job: a panic or an abort on one rank ends every
//! rank in seconds; arguments of the distributed eigensolver that differ between ranks
//! are the same error on every rank; a message to oneself works and two ranks sending
//! to each other at once fail instead of waiting forever; the eigenvalues of a
//! non-finite matrix (finiteness check off) are still the same on every rank. Every run
//! has a time limit of seconds, so a regression is a failure, not a hung CI.

mod common;

use std::time::Duration;

use ctensor_aten::{set_check_finite, DataType, DeviceType, EighRange, Tensor};
use ctensor_base::{Error, Result};
use ctensor_mpi::{
    eigh, eigh_with, eigvalsh, eigvalsh_with, Comm, DistEigBackend, DistMatrix, Grid,
};

const QUICK: Duration = Duration::from_secs(30);

#[test]
fn a_panic_on_one_rank_ends_every_rank_in_seconds() {
    if common::in_child() {
        let mpi = common::Mpi::start();
        if mpi.world.rank() == 1 {
            panic!("rank 1 fails on purpose");
        }
        // The others wait for rank 1 in a collective it never joins.
        let _ = mpi.world.barrier();
        return;
    }
    for np in [2, 3] {
        let (text, took) =
            common::launch_failing("a_panic_on_one_rank_ends_every_rank_in_seconds", np, QUICK);
        assert!(text.contains("rank 1 fails on purpose"), "{text}");
        println!("a panic on rank 1 of {np} ended the job in {took:.1?}");
    }
}

#[test]
fn comm_abort_ends_every_rank_in_seconds() {
    if common::in_child() {
        let mpi = common::Mpi::start();
        if mpi.world.rank() == 0 {
            mpi.world.abort(3);
        }
        let _ = mpi.world.barrier();
        return;
    }
    let (_, took) = common::launch_failing("comm_abort_ends_every_rank_in_seconds", 2, QUICK);
    println!("Comm::abort on rank 0 of 2 ended the job in {took:.1?}");
}

fn hermitian(n: usize, seed: u64) -> Result<Tensor> {
    let x = Tensor::randn(DataType::Double, DeviceType::Cpu, &[n, n], seed)?;
    x.add(&x.t()?)
}

/// The error every rank must return, or a panic naming this rank.
fn every_rank_fails<T: std::fmt::Debug>(w: &Comm, what: &str, got: Result<T>) {
    match got {
        Err(Error::RanksDisagree { .. } | Error::Mpi { .. }) => {}
        other => panic!(
            "{what}: rank {}: expected a disagreement error, got {other:?}",
            w.rank()
        ),
    }
}

mpi_test!(eigensolver_arguments_that_differ_between_ranks_fail_on_every_rank, [2, 3], within 60, |w| {
    let grid = Grid::square(w)?;
    let a = hermitian(12, 1)?;
    let root = (w.rank() == 0).then_some(&a);
    // Different blocks in the scatter: the parts would differ in size.
    let nb = if w.rank() == 1 { 3 } else { 2 };
    every_rank_fails(w, "block sizes", DistMatrix::scatter_from(&grid, root, 0, nb, nb));
    let d = DistMatrix::scatter_from(&grid, root, 0, 2, 2)?;
    // An invalid range on one rank only.
    let range = if w.rank() == 1 { EighRange::Index(0, 99) } else { EighRange::Index(0, 3) };
    every_rank_fails(w, "range", eigvalsh(&d, range));
    // Different backends.
    let backend = if w.rank() == 0 { DistEigBackend::Elpa } else { DistEigBackend::Scalapack };
    every_rank_fails(w, "backend", eigvalsh_with(&d, EighRange::All, backend));
    // Vectors on one rank, values on the others.
    if w.rank() == 0 {
        every_rank_fails(w, "vectors", eigh(&d, EighRange::All).map(|(v, _)| v));
    } else {
        every_rank_fails(w, "vectors", eigvalsh(&d, EighRange::All));
    }
    // The finiteness check off on one rank only.
    set_check_finite(w.rank() != 1);
    every_rank_fails(w, "check_finite", eigvalsh(&d, EighRange::All));
    set_check_finite(true);
    // After all that, the same call agrees and works.
    let values = eigvalsh(&d, EighRange::Index(0, 3))?;
    assert_eq!(values.dims(), [3]);
    Ok(())
});

mpi_test!(eigenvalues_of_a_non_finite_matrix_are_the_same_on_every_rank, [2, 3], within 120, |w| {
    set_check_finite(false);
    let n = 200;
    // One NaN in the lower triangle: pzheevd returned 200 NaN on rank 0 and 199 on the
    // others (a NaN here and a number there) before the values came from rank 0.
    let mut nan_diag = hermitian(n, 5)?;
    nan_diag.set_at(&[10, 10], f64::NAN)?;
    let mut nan_lower = hermitian(n, 6)?;
    nan_lower.set_at(&[150, 3], f64::NAN)?;
    for (label, m) in [("NaN on the diagonal", nan_diag), ("NaN below it", nan_lower)] {
        for dtype in [DataType::Double, DataType::ComplexDouble] {
            let m = m.cast(dtype)?;
            let grid = Grid::square(w)?;
            let d = DistMatrix::scatter_from(&grid, (w.rank() == 0).then_some(&m), 0, 8, 8)?;
            // (A value range with an infinity was seen to wait forever inside p?syevr
            // itself: see set_check_finite.)
            for (backend, range, vectors) in [
                (DistEigBackend::Scalapack, EighRange::All, true),
                (DistEigBackend::Scalapack, EighRange::All, false),
                (DistEigBackend::Scalapack, EighRange::Index(0, 20), true),
                (DistEigBackend::Auto, EighRange::All, false),
            ] {
                let what = format!("{label}, {dtype}, {backend:?} {range:?}, vectors {vectors}");
                let got = if vectors {
                    eigh_with(&d, range, backend).map(|(v, _)| v)
                } else {
                    eigvalsh_with(&d, range, backend)
                };
                // Either every rank fails, or every rank has the same values, bit for bit.
                let failed = w.allgather(&Tensor::from_slice(&[i64::from(got.is_err())], &[1])?)?;
                let failed = failed.to_vec::<i64>()?;
                assert!(failed.iter().all(|&f| f == failed[0]), "{what}: some ranks failed: {failed:?}");
                let Ok(values) = got else { continue };
                let bits: Vec<i64> = values.to_vec::<f64>()?.iter().map(|v| v.to_bits() as i64).collect();
                let count = w.allgather(&Tensor::from_slice(&[bits.len() as i64], &[1])?)?;
                let count = count.to_vec::<i64>()?;
                assert!(count.iter().all(|&c| c == count[0]), "{what}: counts {count:?}");
                let all = w.allgather(&Tensor::from_slice(&bits, &[bits.len()])?)?.to_vec::<i64>()?;
                for (r, part) in all.chunks(bits.len().max(1)).enumerate() {
                    let nan = |b: &[i64]| b.iter().filter(|&&x| f64::from_bits(x as u64).is_nan()).count();
                    assert_eq!(part, &bits[..], "{what}: rank {r}'s values ({} NaN) differ from rank {}'s ({} NaN)", nan(part), w.rank(), nan(&bits));
                }
            }
        }
    }
    set_check_finite(true);
    Ok(())
});

mpi_test!(messages_to_oneself_arrive_in_order, [1, 2], within 30, |w| {
    let me = w.rank();
    let a = Tensor::from_slice(&[1.0f64, 2.0, 3.0], &[3])?;
    let b = Tensor::from_slice(&[4i32, 5], &[2])?;
    w.send(&a, me, 7)?;
    w.send(&b, me, 7)?;
    w.send(&b, me, 8)?;
    // Another tag first, then tag 7 in the order sent.
    assert_eq!(w.recv(me, 8, DeviceType::Cpu)?.to_vec::<i32>()?, [4, 5]);
    assert_eq!(w.recv(me, 7, DeviceType::Cpu)?.to_vec::<f64>()?, [1.0, 2.0, 3.0]);
    // A receive of the wrong shape leaves the message queued.
    let mut wrong = Tensor::zeros(DataType::Int, DeviceType::Cpu, &[3])?;
    assert!(matches!(w.recv_into(&mut wrong, me, 7), Err(Error::RanksDisagree { .. })));
    let mut right = Tensor::zeros(DataType::Int, DeviceType::Cpu, &[2])?;
    w.recv_into(&mut right, me, 7)?;
    assert_eq!(right.to_vec::<i32>()?, [4, 5]);
    // The message is a copy: writing the original after sending changes nothing.
    let mut c = Tensor::from_slice(&[9.0f64], &[1])?;
    w.send(&c, me, 9)?;
    c.set_at(&[0], -1.0)?;
    assert_eq!(w.recv(me, 9, DeviceType::Cpu)?.to_vec::<f64>()?, [9.0]);
    // Nothing waiting: an error, not a wait.
    assert!(matches!(w.recv(me, 7, DeviceType::Cpu), Err(Error::InvalidArgument { .. })));
    if w.size() == 2 {
        // Both ranks send to each other at once with one tag: both fail, neither waits.
        let peer = 1 - me;
        let got = w.send(&a, peer, 5);
        assert!(matches!(got, Err(Error::Mpi { .. })), "rank {me}: {got:?}");
        // The channel is clean afterwards: rank 0 sends first, rank 1 receives first.
        if me == 0 {
            w.send(&a, peer, 5)?;
            assert_eq!(w.recv(peer, 5, DeviceType::Cpu)?.to_vec::<i32>()?, [4, 5]);
        } else {
            assert_eq!(w.recv(peer, 5, DeviceType::Cpu)?.to_vec::<f64>()?, [1.0, 2.0, 3.0]);
            w.send(&b, peer, 5)?;
        }
    }
    Ok(())
});
