//! The process-wide GPU context: one per device ordinal, created on first use, with its
//! stream, its cuBLAS and cuSOLVER handles, and the custom kernels compiled for it.

use std::collections::HashMap;
use std::ffi::{c_void, CString};
use std::panic::catch_unwind;
use std::sync::{Mutex, MutexGuard, OnceLock};

use cudarc::cublas::sys as cublas;
use cudarc::cufft::sys as cufft;
use cudarc::cusolver::sys as cusolver;
use cudarc::driver::result as drv;
use cudarc::driver::sys;

use super::memory::Staging;
use super::nvrtc::{is_unknown_arch, ptx_arch_candidates, ptx_too_new, KernelName, KernelSource};
use super::{unavailable, DEVICE_ENV};
use crate::error::{Error, Result};

/// The error for a failed driver call.
pub(crate) fn driver_err(call: &str) -> impl FnOnce(drv::DriverError) -> Error + '_ {
    move |e| Error::Cuda {
        library: "CUDA driver",
        call: call.to_string(),
        detail: format!("{:?}", e.0),
    }
}

/// Raw handles are plain pointers owned by the context; the mutexes around them decide
/// who uses them.
struct Handle<H>(H);
// SAFETY: cuBLAS/cuSOLVER handles and CUDA modules may be used from any thread as long
// as one thread at a time does (the mutex that holds them sees to that).
unsafe impl<H> Send for Handle<H> {}

/// One GPU: its context, its stream and what is created on it lazily.
pub struct GpuContext {
    ordinal: usize,
    name: String,
    compute_capability: (i32, i32),
    cu_ctx: sys::CUcontext,
    stream: sys::CUstream,
    pools: bool,
    pub(super) staging: Mutex<Option<Staging>>,
    functions: Mutex<HashMap<(&'static str, KernelName), Handle<sys::CUfunction>>>,
    modules: Mutex<HashMap<&'static str, Handle<sys::CUmodule>>>,
    cublas: Mutex<Option<Handle<cublas::cublasHandle_t>>>,
    cusolver: Mutex<Option<Handle<cusolver::cusolverDnHandle_t>>>,
    cufft_plans: Mutex<HashMap<FftPlanKey, Handle<(cufft::cufftHandle, usize)>>>,
}

/// The layout of a batched, in-place complex cuFFT plan of rank 1 to 3 (cuFFT's advanced
/// layout, sizes in elements): `batch` transforms of a dense `dims[..rank]` block of
/// points (row-major, the last dimension fastest), consecutive points `stride` apart,
/// consecutive transforms `dist` apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FftPlanKey {
    /// The number of transformed dimensions, 1 to 3.
    pub rank: u8,
    /// Points along each transformed dimension (the first `rank` entries; the rest 0).
    pub dims: [i32; 3],
    /// Elements between consecutive points of one transform.
    pub stride: i32,
    /// Elements between the first points of consecutive transforms.
    pub dist: i32,
    /// Transforms per execution.
    pub batch: i32,
    /// `Z2Z` (c64) when true, `C2C` (c32) otherwise.
    pub double: bool,
}

// SAFETY: the context and stream handles are process-wide driver objects usable from any
// thread once the context is made current there (`bind`); the mutable state sits behind
// mutexes.
unsafe impl Send for GpuContext {}
// SAFETY: see `Send`.
unsafe impl Sync for GpuContext {}

impl std::fmt::Debug for GpuContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuContext")
            .field("ordinal", &self.ordinal)
            .field("name", &self.name)
            .field("compute_capability", &self.compute_capability)
            .finish()
    }
}

/// The context of the selected GPU (`CTENSOR_GPU_DEVICE`, default 0), created on the
/// first call. Every later call returns the same context, or the same reason it could
/// not be created.
pub fn context() -> Result<&'static GpuContext> {
    // Resolved once: every kernel launch asks, so the answer must not cost a lock.
    static SELECTED: OnceLock<std::result::Result<&'static GpuContext, String>> = OnceLock::new();
    let selected = SELECTED.get_or_init(|| {
        let ordinal = match std::env::var(DEVICE_ENV) {
            Err(_) => 0,
            Ok(v) => v.trim().parse::<usize>().map_err(|_| {
                format!("{DEVICE_ENV}={v:?} is not a device ordinal (expected 0, 1, ...)")
            })?,
        };
        GpuContext::registered(ordinal)
    });
    selected.clone().map_err(unavailable)
}

impl GpuContext {
    /// The context of device `ordinal`, created on first use and kept for the life of
    /// the process.
    pub fn for_ordinal(ordinal: usize) -> Result<&'static GpuContext> {
        GpuContext::registered(ordinal).map_err(unavailable)
    }

    /// The registry behind [`GpuContext::for_ordinal`]: each ordinal's context, or the
    /// reason it could not be created, decided once.
    fn registered(ordinal: usize) -> std::result::Result<&'static GpuContext, String> {
        type Registry = HashMap<usize, std::result::Result<&'static GpuContext, String>>;
        static CONTEXTS: OnceLock<Mutex<Registry>> = OnceLock::new();
        let mut map = lock(CONTEXTS.get_or_init(Default::default));
        map.entry(ordinal)
            .or_insert_with(|| {
                catch_unwind(|| GpuContext::create(ordinal))
                    .unwrap_or_else(|_| {
                        Err("the CUDA driver library lacks a function ctensor needs".into())
                    })
                    .map(|c| &*Box::leak(Box::new(c)))
            })
            .clone()
    }

    fn create(ordinal: usize) -> std::result::Result<GpuContext, String> {
        // SAFETY: only loads the library to see whether it is there.
        if !unsafe { sys::is_culib_present() } {
            return Err(
                "the CUDA driver library (libcuda.so) was not found: no NVIDIA \
                        driver is installed, or its directory is not on LD_LIBRARY_PATH"
                    .into(),
            );
        }
        let why = |call: &str, e: drv::DriverError| format!("{call} failed: {:?}", e.0);
        drv::init().map_err(|e| why("cuInit", e))?;
        let count = drv::device::get_count().map_err(|e| why("cuDeviceGetCount", e))?;
        if ordinal >= count.max(0) as usize {
            return Err(format!(
                "device {ordinal} was asked for ({DEVICE_ENV}) but the driver sees {count} device(s)"
            ));
        }
        let dev = drv::device::get(ordinal as i32).map_err(|e| why("cuDeviceGet", e))?;
        let name = drv::device::get_name(dev).unwrap_or_default();
        let attr = |a| {
            // SAFETY: `dev` came from `device::get`.
            unsafe { drv::device::get_attribute(dev, a) }
        };
        use sys::CUdevice_attribute as A;
        let major = attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR).unwrap_or(0);
        let minor = attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR).unwrap_or(0);
        let pools = attr(A::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED).unwrap_or(0) != 0;
        // SAFETY: `dev` came from `device::get`; the primary context is retained for the
        // life of the process (never released).
        let cu_ctx = unsafe { drv::primary_ctx::retain(dev) }
            .map_err(|e| why("cuDevicePrimaryCtxRetain", e))?;
        // SAFETY: `cu_ctx` is a live context.
        unsafe { drv::ctx::set_current(cu_ctx) }.map_err(|e| why("cuCtxSetCurrent", e))?;
        let stream = drv::stream::create(drv::stream::StreamKind::NonBlocking)
            .map_err(|e| why("cuStreamCreate", e))?;
        if pools {
            // Keep freed memory in the device's pool instead of returning it to the OS at
            // every synchronization (the default threshold is 0): the solver loop frees
            // and reallocates the same sizes each iteration.
            let mut pool: sys::CUmemoryPool = std::ptr::null_mut();
            let mut threshold = u64::MAX;
            // SAFETY: `dev` is a device handle; `pool` and `threshold` are valid for the
            // writes and the read the calls make.
            let r = unsafe {
                match sys::cuDeviceGetDefaultMemPool(&mut pool, dev) {
                    sys::CUresult::CUDA_SUCCESS => sys::cuMemPoolSetAttribute(
                        pool,
                        sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                        &mut threshold as *mut u64 as *mut c_void,
                    ),
                    other => other,
                }
            };
            if r != sys::CUresult::CUDA_SUCCESS {
                return Err(format!(
                    "setting the memory pool's release threshold failed: {r:?}"
                ));
            }
        }
        Ok(GpuContext {
            ordinal,
            name,
            compute_capability: (major, minor),
            cu_ctx,
            stream,
            pools,
            staging: Mutex::new(None),
            functions: Mutex::new(HashMap::new()),
            modules: Mutex::new(HashMap::new()),
            cublas: Mutex::new(None),
            cusolver: Mutex::new(None),
            cufft_plans: Mutex::new(HashMap::new()),
        })
    }

    /// The device ordinal.
    pub fn ordinal(&self) -> usize {
        self.ordinal
    }

    /// The device's name, e.g. `NVIDIA H100 80GB HBM3`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The compute capability (major, minor), e.g. (9, 0).
    pub fn compute_capability(&self) -> (i32, i32) {
        self.compute_capability
    }

    /// Whether device memory comes from the driver's stream-ordered memory pool.
    pub fn uses_memory_pool(&self) -> bool {
        self.pools
    }

    /// The stream every ctensor operation on this device is queued on.
    pub fn stream(&self) -> sys::CUstream {
        self.stream
    }

    /// Makes this context current on the calling thread; every driver call needs it.
    pub fn bind(&self) -> Result<()> {
        // SAFETY: `cu_ctx` is a retained, never released, primary context.
        unsafe { drv::ctx::set_current(self.cu_ctx) }.map_err(driver_err("cuCtxSetCurrent"))
    }

    /// Waits for everything queued on the stream.
    pub fn synchronize(&self) -> Result<()> {
        self.bind()?;
        // SAFETY: the stream belongs to this context and lives as long as the process.
        unsafe { drv::stream::synchronize(self.stream) }.map_err(driver_err("cuStreamSynchronize"))
    }

    /// Waits for everything queued on every stream of this context (`cuCtxSynchronize`):
    /// ctensor's, and those of other libraries on the same (primary) context, such as
    /// PyTorch's and CuPy's.
    pub fn synchronize_context(&self) -> Result<()> {
        self.bind()?;
        drv::ctx::synchronize().map_err(driver_err("cuCtxSynchronize"))
    }

    /// The kernel `name` of `source`, compiling and loading the source on first use.
    /// A cached kernel is found without allocating: the name's parts are the key.
    ///
    /// Errors: [`Error::Cuda`] when NVRTC rejects the source, the driver cannot load the
    /// PTX, or the source has no kernel of that name.
    pub fn function(&self, source: &KernelSource, name: KernelName) -> Result<sys::CUfunction> {
        let key = (source.name, name);
        if let Some(f) = lock(&self.functions).get(&key) {
            return Ok(f.0);
        }
        self.bind()?;
        let module = {
            let mut modules = lock(&self.modules);
            match modules.get(source.name) {
                Some(m) => m.0,
                None => {
                    let m = self.load(source)?;
                    modules.insert(source.name, Handle(m));
                    m
                }
            }
        };
        let kernel = name.to_string();
        let cname = CString::new(kernel.as_str()).unwrap_or_default();
        // SAFETY: `module` is a loaded module of this context, never unloaded.
        let f = unsafe { drv::module::get_function(module, cname) }
            .map_err(driver_err(&format!("cuModuleGetFunction({kernel})")))?;
        lock(&self.functions).insert(key, Handle(f));
        Ok(f)
    }

    /// Loads `source` for this device: SASS for its exact architecture first (no JIT, so
    /// a driver older than NVRTC still loads it: NVRTC 12.9 emits PTX 8.8, which drivers
    /// before R575 refuse with `CUDA_ERROR_UNSUPPORTED_PTX_VERSION`), then PTX for the
    /// newest virtual architecture NVRTC knows, compiled forward by the driver.
    fn load(&self, source: &KernelSource) -> Result<sys::CUmodule> {
        let (major, minor) = self.compute_capability;
        let load = |image: &[u8], what: &str| {
            // SAFETY: `image` is a CUBIN or NUL-terminated PTX image; the context is current.
            unsafe { drv::module::load_data(image.as_ptr() as *const c_void) }.map_err(driver_err(
                &format!("cuModuleLoadData({}.cu, {what})", source.name),
            ))
        };
        let sass = source
            .compile_cubin(&format!("sm_{major}{minor}"))
            .and_then(|bin| load(&bin, "SASS"));
        let sass_err = match sass {
            Ok(m) => return Ok(m),
            Err(e) => e,
        };
        for arch in ptx_arch_candidates(major, minor) {
            let ptx = match source.compile(Some(&arch)) {
                Err(e) if is_unknown_arch(&e) => continue,
                other => other?,
            };
            let ptx = CString::new(ptx).unwrap_or_default();
            return load(ptx.as_bytes_with_nul(), &arch).map_err(|e| match e {
                Error::Cuda {
                    library,
                    call,
                    detail,
                } if ptx_too_new(&detail) => Error::Cuda {
                    library,
                    call,
                    detail: format!(
                        "{detail}: the driver is older than NVRTC's PTX (update the driver, \
                         or use an NVRTC no newer than it); the SASS path failed first \
                         with: {sass_err}"
                    ),
                },
                other => other,
            });
        }
        Err(sass_err)
    }

    /// Launches `f` on the stream with the grid and block given and `params` (pointers
    /// to each argument's value, in order).
    ///
    /// # Safety
    /// `params` match the kernel's parameter list in number, order and type, and every
    /// device pointer among them is valid for what the kernel does with it.
    pub unsafe fn launch(
        &self,
        f: sys::CUfunction,
        grid: (u32, u32, u32),
        block: (u32, u32, u32),
        shared_bytes: u32,
        params: &mut [*mut c_void],
    ) -> Result<()> {
        self.bind()?;
        // SAFETY: the caller's contract; the stream belongs to this context.
        unsafe { drv::launch_kernel(f, grid, block, shared_bytes, self.stream, params) }
            .map_err(driver_err("cuLaunchKernel"))
    }

    /// Runs `body` with this context's cuBLAS handle (created on first use, bound to the
    /// stream). One thread at a time holds the handle.
    pub fn with_cublas<R>(
        &self,
        body: impl FnOnce(cublas::cublasHandle_t) -> Result<R>,
    ) -> Result<R> {
        let err = |call: &str, e: cudarc::cublas::result::CublasError| Error::Cuda {
            library: "cuBLAS",
            call: call.into(),
            detail: format!("{:?}", e.0),
        };
        let create = |stream: sys::CUstream| {
            let h = cudarc::cublas::result::create_handle().map_err(|e| err("cublasCreate", e))?;
            // SAFETY: `h` is a fresh handle; the stream lives as long as the process.
            unsafe { cudarc::cublas::result::set_stream(h, stream as _) }
                .map_err(|e| err("cublasSetStream", e))?;
            Ok(h)
        };
        let missing = "the cuBLAS library (libcublas.so) was not found";
        self.with_handle(
            &self.cublas,
            cublas::is_culib_present,
            missing,
            create,
            body,
        )
    }

    /// Runs `body` with this context's cuSOLVER dense handle (created on first use, bound
    /// to the stream). One thread at a time holds the handle.
    pub fn with_cusolver<R>(
        &self,
        body: impl FnOnce(cusolver::cusolverDnHandle_t) -> Result<R>,
    ) -> Result<R> {
        let err = |call: &str, e: cudarc::cusolver::result::CusolverError| Error::Cuda {
            library: "cuSOLVER",
            call: call.into(),
            detail: format!("{:?}", e.0),
        };
        let create = |stream: sys::CUstream| {
            let h =
                cudarc::cusolver::result::dn_create().map_err(|e| err("cusolverDnCreate", e))?;
            // SAFETY: `h` is a fresh handle; the stream lives as long as the process.
            unsafe { cudarc::cusolver::result::dn_set_stream(h, stream as _) }
                .map_err(|e| err("cusolverDnSetStream", e))?;
            Ok(h)
        };
        let missing = "the cuSOLVER library (libcusolver.so) was not found";
        self.with_handle(
            &self.cusolver,
            cusolver::is_culib_present,
            missing,
            create,
            body,
        )
    }

    /// Runs `body` with this context's cuFFT plan for `key` and the bytes of work area it
    /// needs. Plans are created on first use without a work area of their own (the
    /// caller gives one from ctensor's allocator, `cufftSetWorkArea`, for each
    /// execution), bound to the stream, and kept for the life of the process. One thread
    /// at a time uses the plans.
    pub fn with_cufft_plan<R>(
        &self,
        key: FftPlanKey,
        body: impl FnOnce(cufft::cufftHandle, usize) -> Result<R>,
    ) -> Result<R> {
        let err = |call: &str, e: cudarc::cufft::result::CufftError| Error::Cuda {
            library: "cuFFT",
            call: call.into(),
            detail: format!("{:?} for {key:?}", e.0),
        };
        let mut plans = lock(&self.cufft_plans);
        self.bind()?;
        let (h, work) = match plans.get(&key) {
            Some(h) => h.0,
            None => {
                // SAFETY: only loads the library to see whether it is there.
                if !unsafe { cufft::is_culib_present() } {
                    return Err(unavailable(
                        "the cuFFT library (libcufft.so) was not found".into(),
                    ));
                }
                let ty = if key.double {
                    cufft::cufftType::CUFFT_Z2Z
                } else {
                    cufft::cufftType::CUFFT_C2C
                };
                let h = cudarc::cufft::result::create().map_err(|e| err("cufftCreate", e))?;
                // Non-null embeds (the dense block itself): with null ones cuFFT ignores
                // stride and dist.
                let rank = key.rank.clamp(1, 3);
                let mut n = key.dims;
                let mut embed = key.dims;
                // SAFETY: `h` is a fresh handle; the arrays hold at least `rank` entries
                // and live across the calls; the stream lives as long as the process.
                let made = unsafe {
                    cudarc::cufft::result::set_auto_allocation(h, false)
                        .map_err(|e| err("cufftSetAutoAllocation", e))
                        .and_then(|()| {
                            cudarc::cufft::result::make_plan_many(
                                h,
                                i32::from(rank),
                                n.as_mut_ptr(),
                                embed.as_mut_ptr(),
                                key.stride,
                                key.dist,
                                embed.as_mut_ptr(),
                                key.stride,
                                key.dist,
                                ty,
                                key.batch,
                            )
                            .map_err(|e| err("cufftMakePlanMany", e))
                        })
                        .and_then(|work| {
                            cudarc::cufft::result::set_stream(h, self.stream as _)
                                .map(|()| work)
                                .map_err(|e| err("cufftSetStream", e))
                        })
                };
                let work = match made {
                    Ok(work) => work,
                    Err(e) => {
                        // SAFETY: `h` is ours and unused.
                        let _ = unsafe { cudarc::cufft::result::destroy(h) };
                        return Err(e);
                    }
                };
                plans.insert(key, Handle((h, work)));
                (h, work)
            }
        };
        body(h, work)
    }

    /// The library handle in `slot`, created by `create` on first use when `present`
    /// finds the library, then passed to `body` with the slot locked.
    fn with_handle<H: Copy, R>(
        &self,
        slot: &Mutex<Option<Handle<H>>>,
        present: unsafe fn() -> bool,
        missing: &str,
        create: impl FnOnce(sys::CUstream) -> Result<H>,
        body: impl FnOnce(H) -> Result<R>,
    ) -> Result<R> {
        let mut guard = lock(slot);
        self.bind()?;
        let h = match guard.as_ref() {
            Some(h) => h.0,
            None => {
                // SAFETY: only loads the library to see whether it is there.
                if !unsafe { present() } {
                    return Err(unavailable(missing.into()));
                }
                let h = create(self.stream)?;
                *guard = Some(Handle(h));
                h
            }
        };
        body(h)
    }
}

/// Locks `m`, recovering the data of a mutex poisoned by a panic elsewhere (the maps and
/// handles it guards stay consistent: each insertion is one step).
pub(super) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
