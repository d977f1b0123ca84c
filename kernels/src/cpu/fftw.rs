//! FFTW 3 as the host FFT backend ([`HostFft::Fftw`]), loaded at run time from the
//! system's `libfftw3.so.3` / `libfftw3f.so.3` (Debian's `libfftw3-double3` and
//! `libfftw3-single3`), so that FFTW is never a build dependency.
//!
//! A block of up to three consecutive axes of the dense array `[outer, dims..., inner]`
//! is one plan of FFTW's guru interface: a transform of the block's rank at the block's
//! strides, batched over `outer` and `inner`, in place, or out of place from an input
//! array it preserves (`FFTW_PRESERVE_INPUT`) into a new one. Plans are made once per
//! layout, precision, direction, planner rigour, placement and data alignment
//! (`fftw_alignment_of` of each array), on scratch buffers of the same alignment
//! (planning with `FFTW_MEASURE` overwrites its arrays), under one lock, and kept for the life of the process; executions use FFTW's
//! thread-safe new-array call (`fftw_execute_dft`) without a lock. Large transforms are
//! split over ctensor's threads by `outer` or, when that is too short, by `inner`.
//!
//! FFTW's planner is not thread-safe: ctensor serialises its own planning, and a program
//! that also plans with FFTW on other threads at the same time must serialise with it
//! (FFTW's own rule for every caller).

use std::collections::HashMap;
use std::ffi::{c_int, c_uint, c_void};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Mutex, OnceLock};

use ctensor_base::{Error, Result};
use rustfft::num_complex::Complex;

use crate::fft::{FftDirection, FftwPlanner, HostFft};
use crate::parallel::{for_each_range, SendPtr};

/// `fftw_iodim64`: a length and the input and output strides, in elements.
#[repr(C)]
#[derive(Clone, Copy)]
struct IoDim {
    n: isize,
    is: isize,
    os: isize,
}

type PlanFn = unsafe extern "C" fn(
    c_int,
    *const IoDim,
    c_int,
    *const IoDim,
    *mut c_void,
    *mut c_void,
    c_int,
    c_uint,
) -> *mut c_void;
type ExecFn = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_void);
type AlignFn = unsafe extern "C" fn(*const c_void) -> c_int;

/// The three entry points of one precision, with the library that holds them.
struct Api {
    plan: PlanFn,
    exec: ExecFn,
    align: AlignFn,
    _lib: libloading::Library,
}

/// FFTW's `FFTW_MEASURE`, `FFTW_UNALIGNED`, `FFTW_PRESERVE_INPUT`, `FFTW_PATIENT`,
/// `FFTW_ESTIMATE` flags.
const MEASURE: c_uint = 0;
const UNALIGNED: c_uint = 1 << 1;
const PRESERVE_INPUT: c_uint = 1 << 4;
const PATIENT: c_uint = 1 << 5;
const ESTIMATE: c_uint = 1 << 6;

/// The library file of a precision and the variable that overrides it.
fn library(double: bool) -> (&'static str, &'static str, &'static str) {
    if double {
        ("CTENSOR_FFTW_LIB", "libfftw3.so.3", "libfftw3-double3")
    } else {
        ("CTENSOR_FFTWF_LIB", "libfftw3f.so.3", "libfftw3-single3")
    }
}

fn load(double: bool) -> std::result::Result<Api, String> {
    let (var, default, package) = library(double);
    let path = std::env::var(var).unwrap_or_else(|_| default.to_string());
    let prefix = if double { "fftw" } else { "fftwf" };
    // SAFETY: loading FFTW runs no initialisation code with preconditions.
    let lib = unsafe { libloading::Library::new(&path) }.map_err(|e| {
        format!(
            "FFTW could not be loaded from {path} ({e}); install Debian's {package} \
             (apt-get install {package}) or set {var} to the library's path"
        )
    })?;
    // SAFETY: the symbols are FFTW's documented functions with these C signatures.
    unsafe {
        let plan = *lib
            .get::<PlanFn>(format!("{prefix}_plan_guru64_dft\0").as_bytes())
            .map_err(|e| format!("{path} has no {prefix}_plan_guru64_dft: {e}"))?;
        let exec = *lib
            .get::<ExecFn>(format!("{prefix}_execute_dft\0").as_bytes())
            .map_err(|e| format!("{path} has no {prefix}_execute_dft: {e}"))?;
        let align = *lib
            .get::<AlignFn>(format!("{prefix}_alignment_of\0").as_bytes())
            .map_err(|e| format!("{path} has no {prefix}_alignment_of: {e}"))?;
        Ok(Api {
            plan,
            exec,
            align,
            _lib: lib,
        })
    }
}

/// The loaded library of a precision, or why it is not there (tried once).
fn api(double: bool) -> Result<&'static Api> {
    static F64: OnceLock<std::result::Result<Api, String>> = OnceLock::new();
    static F32: OnceLock<std::result::Result<Api, String>> = OnceLock::new();
    let cell = if double { &F64 } else { &F32 };
    cell.get_or_init(|| load(double))
        .as_ref()
        .map_err(|why| Error::Unsupported {
            op: "fft",
            what: format!("the FFTW backend: {why}"),
        })
}

/// Whether FFTW loads in both precisions, or the first reason it does not.
pub(crate) fn available() -> Result<()> {
    api(true)?;
    api(false)?;
    Ok(())
}

/// 0: not decided yet (the environment decides on first use); else `1 + HostFft`.
static BACKEND: AtomicU8 = AtomicU8::new(0);
/// 0: not decided yet; else `1 + FftwPlanner`.
static PLANNER_MODE: AtomicU8 = AtomicU8::new(0);

pub(crate) fn set_backend(b: HostFft) -> Result<()> {
    if b == HostFft::Fftw {
        available()?;
    }
    BACKEND.store(1 + b as u8, Ordering::Relaxed);
    Ok(())
}

/// The backend in use: set by [`set_backend`], else `CTENSOR_FFT` (`rustfft` or `fftw`;
/// unset is `rustfft`), read on first use.
pub(crate) fn backend() -> Result<HostFft> {
    match BACKEND.load(Ordering::Relaxed) {
        1 => return Ok(HostFft::RustFft),
        2 => return Ok(HostFft::Fftw),
        _ => {}
    }
    let b = match std::env::var("CTENSOR_FFT").as_deref() {
        Err(_) | Ok("") | Ok("rustfft") => HostFft::RustFft,
        Ok("fftw") => HostFft::Fftw,
        Ok(other) => {
            return Err(Error::InvalidArgument {
                op: "fft",
                expected: "CTENSOR_FFT unset, \"rustfft\" or \"fftw\"".into(),
                given: format!("CTENSOR_FFT={other:?}"),
            })
        }
    };
    set_backend(b)?;
    Ok(b)
}

pub(crate) fn set_planner(p: FftwPlanner) {
    PLANNER_MODE.store(1 + p as u8, Ordering::Relaxed);
}

/// The planner rigour: set by [`set_planner`], else `CTENSOR_FFTW_PLANNER` (`estimate`,
/// `measure`, `patient`; unset is `measure`).
pub(crate) fn planner() -> Result<FftwPlanner> {
    let p = match PLANNER_MODE.load(Ordering::Relaxed) {
        1 => FftwPlanner::Estimate,
        2 => FftwPlanner::Measure,
        3 => FftwPlanner::Patient,
        _ => match std::env::var("CTENSOR_FFTW_PLANNER").as_deref() {
            Err(_) | Ok("") | Ok("measure") => FftwPlanner::Measure,
            Ok("estimate") => FftwPlanner::Estimate,
            Ok("patient") => FftwPlanner::Patient,
            Ok(other) => {
                return Err(Error::InvalidArgument {
                    op: "fft",
                    expected:
                        "CTENSOR_FFTW_PLANNER unset, \"estimate\", \"measure\" or \"patient\""
                            .into(),
                    given: format!("CTENSOR_FFTW_PLANNER={other:?}"),
                })
            }
        },
    };
    set_planner(p);
    Ok(p)
}

/// Everything a plan depends on.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Key {
    double: bool,
    forward: bool,
    flags: c_uint,
    /// The transform's axes and the batch's, as (length, stride).
    dims: Vec<(usize, usize)>,
    howmany: Vec<(usize, usize)>,
    align: c_int,
    /// The output's alignment class for a transform out of place; `None` in place.
    out_align: Option<c_int>,
}

/// A plan pointer; FFTW's plans may be executed from any thread.
#[derive(Clone, Copy)]
struct Plan(*mut c_void);
// SAFETY: a plan is read-only after planning, and `fftw_execute_dft` on it is
// thread-safe (FFTW's documentation, "Thread safety").
unsafe impl Send for Plan {}
// SAFETY: as above: sharing a plan between threads only ever executes it.
unsafe impl Sync for Plan {}

fn plans() -> &'static Mutex<HashMap<Key, Plan>> {
    static PLANS: OnceLock<Mutex<HashMap<Key, Plan>>> = OnceLock::new();
    PLANS.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The cached plan for `key`, made on scratch buffers of `span` elements when missing.
fn plan_for<F: Copy + Default>(api: &Api, key: Key, span: usize) -> Result<Plan> {
    let mut cache = plans().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&p) = cache.get(&key) {
        return Ok(p);
    }
    // Planning with FFTW_MEASURE writes its arrays: scratch buffers whose alignment is
    // the data's (a plan runs only on arrays of the alignment it was made for).
    let extra = 64 / std::mem::size_of::<Complex<F>>().max(1) + 1;
    let mut flags = key.flags;
    // A scratch start of alignment class `align` inside `buf`; none: a plan that imposes
    // no alignment (an alignment FFTW's SIMD never asks for).
    let mut placed = |buf: &mut Vec<Complex<F>>, align: c_int| -> *mut c_void {
        let base = buf.as_mut_ptr();
        let start = (0..extra)
            // SAFETY: `base + k` stays inside `buf`; `alignment_of` only reads the
            // address.
            .find(|&k| unsafe { (api.align)(base.add(k).cast()) } == align)
            .unwrap_or_else(|| {
                flags |= UNALIGNED;
                0
            });
        // SAFETY: `start + span` is within `buf`.
        unsafe { base.add(start) }.cast::<c_void>()
    };
    let mut scratch = vec![Complex::<F>::default(); span + extra];
    let out_len = if key.out_align.is_some() {
        span + extra
    } else {
        0
    };
    let mut scratch_out = vec![Complex::<F>::default(); out_len];
    let p = placed(&mut scratch, key.align);
    let q = match key.out_align {
        None => p,
        Some(align) => placed(&mut scratch_out, align),
    };
    if key.out_align.is_some() {
        // The input of a transform out of place is the caller's array: never written.
        flags |= PRESERVE_INPUT;
    }
    let io = |v: &[(usize, usize)]| -> Vec<IoDim> {
        v.iter()
            .map(|&(n, s)| IoDim {
                n: n as isize,
                is: s as isize,
                os: s as isize,
            })
            .collect()
    };
    let (dims, howmany) = (io(&key.dims), io(&key.howmany));
    let sign = if key.forward { -1 } else { 1 };
    // SAFETY: the dims and strides address `span` elements from `p` and from `q`, all
    // inside the scratch buffers; the cache's lock serialises ctensor's planning.
    let plan = unsafe {
        (api.plan)(
            dims.len() as c_int,
            dims.as_ptr(),
            howmany.len() as c_int,
            howmany.as_ptr(),
            p,
            q,
            sign,
            flags,
        )
    };
    if plan.is_null() {
        return Err(Error::Internal {
            op: "fft",
            what: format!(
                "FFTW returned no plan for lengths and strides {:?} batched as {:?}",
                key.dims, key.howmany
            ),
        });
    }
    let plan = Plan(plan);
    cache.insert(key, plan);
    Ok(plan)
}

/// Elements from the first to the last one the (length, stride) pairs address, plus one.
fn span(dims: &[(usize, usize)]) -> usize {
    1 + dims.iter().map(|&(n, s)| (n - 1) * s).sum::<usize>()
}

/// One planned in-place transform of a fixed layout and alignment, executed without a
/// lock (the sphere ↔ box plan keeps its passes as these).
#[derive(Clone, Copy)]
pub(crate) struct Guru {
    plan: Plan,
    exec: ExecFn,
}

impl Guru {
    /// Runs the transform in place on the data at `p`.
    ///
    /// # Safety
    /// `p` addresses the layout the transform was planned for (every element its lengths
    /// and strides reach is valid for reads and writes and belongs to this call), in the
    /// precision it was planned for, at the alignment class it was planned for
    /// ([`alignment`]).
    pub(crate) unsafe fn run<F>(&self, p: *mut Complex<F>) {
        // SAFETY: the caller's contract.
        unsafe { (self.exec)(self.plan.0, p.cast(), p.cast()) }
    }
}

/// FFTW's alignment class (`fftw_alignment_of`) of the address `addr` in a precision; it
/// only looks at the number.
pub(crate) fn alignment(double: bool, addr: usize) -> Result<c_int> {
    let api = api(double)?;
    // SAFETY: `alignment_of` reads no memory, only the address's value.
    Ok(unsafe { (api.align)(addr as *const c_void) })
}

/// The in-place transform of `dims` batched over `howmany` ((length, stride) pairs in
/// elements) for `Complex<F>` data (`double`: `F = f64`) of alignment class `align`,
/// planned with the current [`planner`] rigour on first use and cached as the dense
/// backend's plans are.
pub(crate) fn guru<F: Copy + Default>(
    double: bool,
    forward: bool,
    dims: &[(usize, usize)],
    howmany: &[(usize, usize)],
    align: c_int,
) -> Result<Guru> {
    let api = api(double)?;
    let flags = match planner()? {
        crate::fft::FftwPlanner::Estimate => ESTIMATE,
        crate::fft::FftwPlanner::Measure => MEASURE,
        crate::fft::FftwPlanner::Patient => PATIENT,
    };
    let all: Vec<(usize, usize)> = dims.iter().chain(howmany).copied().collect();
    let key = Key {
        double,
        forward,
        flags,
        dims: dims.to_vec(),
        howmany: howmany.to_vec(),
        align,
        out_align: None,
    };
    Ok(Guru {
        plan: plan_for::<F>(api, key, span(&all))?,
        exec: api.exec,
    })
}

/// Below this much work (elements × log2 of the transform's size) one thread runs it,
/// as for the rustfft path.
const PARALLEL_WORK: usize = 1 << 20;

/// The block transform of [`crate::fft::Fft::fft_block`] through FFTW for `Complex<F>`
/// data (`double`: `F = f64`): in place on `data`, or with `src` out of place from
/// `src` into `data` ([`crate::fft::Fft::fft_block_into`]), `src` left as it is.
///
/// # Safety
/// `data` is valid for reads and writes of `outer · Π dims · inner` elements and `src`,
/// when given, for reads of as many, not overlapping `data`; `F` is `f64` when `double`
/// and `f32` otherwise.
pub(crate) unsafe fn block<F: Copy + Default + Send + Sync>(
    double: bool,
    direction: FftDirection,
    outer: usize,
    dims: &[usize],
    inner: usize,
    data: *mut Complex<F>,
    src: Option<*const Complex<F>>,
) -> Result<()> {
    let api = api(double)?;
    let flags = match planner()? {
        crate::fft::FftwPlanner::Estimate => ESTIMATE,
        crate::fft::FftwPlanner::Measure => MEASURE,
        crate::fft::FftwPlanner::Patient => PATIENT,
    };
    let points: usize = dims.iter().product();
    // The block's axes at their strides (the last one at `inner`).
    let mut axes = Vec::with_capacity(dims.len());
    let mut stride = inner;
    for &n in dims.iter().rev() {
        axes.push((n, stride));
        stride *= n;
    }
    axes.reverse();
    let log = (usize::BITS - points.leading_zeros()) as usize;
    let work = (outer * points * inner).saturating_mul(log);
    let threads = crate::parallel::num_threads();
    let forward = direction == FftDirection::Forward;
    let d = SendPtr(data);
    let s = src.map(|s| SendPtr(s.cast_mut()));
    // One execution over `o` outer slabs from slab `o0` and `i` inner columns from `i0`.
    let run = |o0: usize, o: usize, i0: usize, i: usize| -> Result<()> {
        let howmany: Vec<(usize, usize)> = [(o, points * inner), (i, 1)]
            .into_iter()
            .filter(|&(n, _)| n > 1)
            .collect();
        let all: Vec<(usize, usize)> = axes.iter().chain(&howmany).copied().collect();
        let at = o0 * points * inner + i0;
        // SAFETY: slab `o0` column `i0` is inside the caller's arrays.
        let q = unsafe { d.get().add(at) };
        // SAFETY: as above.
        let p = s.as_ref().map_or(q, |s| unsafe { s.get().add(at) });
        // SAFETY: `alignment_of` only reads the address.
        let align_of = |x: *mut Complex<F>| unsafe { (api.align)(x.cast()) };
        let key = Key {
            double,
            forward,
            flags,
            dims: axes.clone(),
            howmany,
            align: align_of(p),
            out_align: s.as_ref().map(|_| align_of(q)),
        };
        let plan = plan_for::<F>(api, key, span(&all))?;
        // SAFETY: the plan's lengths and strides address only the elements of slabs
        // o0..o0 + o, columns i0..i0 + i, which belong to this call; in place or from
        // the input (which the plan preserves) into `data`, as planned, at the
        // alignments it was planned for.
        unsafe { (api.exec)(plan.0, p.cast(), q.cast()) };
        Ok(())
    };
    if work < PARALLEL_WORK || threads < 2 {
        return run(0, outer, 0, inner);
    }
    let failed: Mutex<Option<Error>> = Mutex::new(None);
    let record = |r: Result<()>| {
        if let Err(e) = r {
            failed
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get_or_insert(e);
        }
    };
    if outer >= threads {
        for_each_range(outer, points * inner * log, |r| {
            record(run(r.start, r.len(), 0, inner))
        });
    } else {
        // A single slab or a few: split the columns, one slab at a time.
        for o in 0..outer {
            for_each_range(inner, points * log, |r| record(run(o, 1, r.start, r.len())));
        }
    }
    match failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
        Some(e) => Err(e),
        None => Ok(()),
    }
}
