//! Status codes, the thread's last error message, the version, and the guard every entry
//! point runs its body in (null checks, panics caught, errors turned into a status).

use std::cell::RefCell;
use std::collections::BTreeSet;
use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Mutex;

use ctensor_base::Error;

/// The result of every `ct_*` function; `CT_OK` (0) on success, otherwise the cause,
/// with the message in [`ct_last_error_message`].
#[allow(non_camel_case_types)]
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ct_status {
    /// Success.
    CT_OK = 0,
    /// A required pointer argument was null.
    CT_ERR_NULL = 1,
    /// A handle (`ct_tensor*`, `ct_mirrored*`, `ct_stream*`) that is not live (freed,
    /// or never created by ctensor).
    CT_ERR_INVALID_HANDLE = 2,
    /// Shapes that do not fit together, an index or range out of bounds, an overflow.
    CT_ERR_SHAPE = 3,
    /// A data type mismatch, or an operation not defined for the data type.
    CT_ERR_DTYPE = 4,
    /// The device is unavailable, operands are on different devices, or a CUDA call failed.
    CT_ERR_DEVICE = 5,
    /// A LAPACK routine reported failure (not positive definite, no convergence, ...).
    CT_ERR_LAPACK = 6,
    /// Any other invalid argument (a bad character code, a malformed equation, ...).
    CT_ERR_INVALID_ARGUMENT = 7,
    /// Memory could not be allocated.
    CT_ERR_ALLOC = 8,
    /// The tensor's memory is in use by a conflicting borrow.
    CT_ERR_BORROW = 9,
    /// A panic inside ctensor (a bug); it was caught at the border.
    CT_ERR_PANIC = 10,
    /// ctensor detected a bug of its own (an impossible state); the message says where.
    CT_ERR_INTERNAL = 11,
    /// A file could not be read or written, or its contents are malformed.
    CT_ERR_IO = 12,
}

thread_local! {
    static LAST: RefCell<CString> = RefCell::new(CString::default());
}

/// Records `msg` as this thread's last error message.
pub(crate) fn set_message(msg: &str) {
    let c = CString::new(msg.replace('\0', " ")).unwrap_or_default();
    LAST.with(|l| *l.borrow_mut() = c);
}

/// The calling thread's last error message (empty after a success-only history). The
/// pointer stays valid until the thread's next failing `ct_*` call.
#[no_mangle]
pub extern "C" fn ct_last_error_message() -> *const c_char {
    LAST.with(|l| l.borrow().as_ptr())
}

/// The ctensor version, e.g. `"0.1.0"` (static storage).
#[no_mangle]
pub extern "C" fn ct_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr() as *const c_char
}

/// What went wrong inside an entry point.
pub(crate) enum Fail {
    /// A ctensor error.
    Err(Error),
    /// A null pointer argument, by name.
    Null(&'static str),
    /// A handle that is not live: the argument's name and the handle's kind
    /// (`ct_tensor`, `ct_mirrored`, `ct_stream`).
    Handle(&'static str, &'static str),
    /// A bad argument detected at the border.
    Arg(String),
}

impl From<Error> for Fail {
    fn from(e: Error) -> Self {
        Fail::Err(e)
    }
}

fn status_of(e: &Error) -> ct_status {
    use ct_status::*;
    match e {
        Error::ShapeMismatch { .. }
        | Error::Broadcast { .. }
        | Error::NotAMatrix { .. }
        | Error::OutOfRange { .. }
        | Error::Overflow { .. } => CT_ERR_SHAPE,
        Error::DTypeMismatch { .. } | Error::UnsupportedDType { .. } | Error::CannotCast { .. } => {
            CT_ERR_DTYPE
        }
        Error::DeviceUnavailable { .. } | Error::DeviceMismatch { .. } | Error::Cuda { .. } => {
            CT_ERR_DEVICE
        }
        Error::Lapack { .. } | Error::IllConditioned { .. } => CT_ERR_LAPACK,
        Error::Alloc { .. } => CT_ERR_ALLOC,
        Error::BorrowConflict { .. } => CT_ERR_BORROW,
        Error::Internal { .. } => CT_ERR_INTERNAL,
        Error::Io { .. } | Error::BadFile { .. } => CT_ERR_IO,
        _ => CT_ERR_INVALID_ARGUMENT,
    }
}

/// Runs `body` for the entry point `name`: a panic becomes `CT_ERR_PANIC`, a failure
/// its status, and either one this thread's last message.
pub(crate) fn guard(name: &str, body: impl FnOnce() -> Result<(), Fail>) -> ct_status {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => ct_status::CT_OK,
        Ok(Err(f)) => {
            let (status, msg) = match f {
                Fail::Err(e) => (status_of(&e), e.to_string()),
                Fail::Null(arg) => (ct_status::CT_ERR_NULL, format!("`{arg}` must not be null")),
                Fail::Handle(arg, kind) => (
                    ct_status::CT_ERR_INVALID_HANDLE,
                    format!("`{arg}` is not a live {kind} (freed already, or not from ctensor)"),
                ),
                Fail::Arg(m) => (ct_status::CT_ERR_INVALID_ARGUMENT, m),
            };
            set_message(&format!("{name}: {msg}"));
            status
        }
        Err(p) => {
            let what = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            set_message(&format!(
                "{name}: internal error (panic caught at the C border): {what}"
            ));
            ct_status::CT_ERR_PANIC
        }
    }
}

/// `p` as a reference, or `Fail::Null(name)`.
///
/// # Safety
/// A non-null `p` points to a valid `T` for the returned lifetime.
pub(crate) unsafe fn non_null<'a, T>(p: *const T, name: &'static str) -> Result<&'a T, Fail> {
    // SAFETY: the caller's promise for non-null pointers.
    unsafe { p.as_ref() }.ok_or(Fail::Null(name))
}

/// Writes `v` through the out-pointer `p`, or `Fail::Null(name)`.
///
/// # Safety
/// A non-null `p` is valid for a write of `T`.
pub(crate) unsafe fn write_out<T>(p: *mut T, name: &'static str, v: T) -> Result<(), Fail> {
    if p.is_null() {
        return Err(Fail::Null(name));
    }
    // SAFETY: non-null and valid for writes (caller).
    unsafe { p.write(v) };
    Ok(())
}

/// The set of live handles of one kind (their addresses), so that a freed or foreign
/// pointer is reported instead of dereferenced.
pub(crate) struct Handles(Mutex<BTreeSet<usize>>);

impl Handles {
    /// An empty set (for a `static`).
    pub(crate) const fn new() -> Handles {
        Handles(Mutex::new(BTreeSet::new()))
    }

    fn set(&self) -> std::sync::MutexGuard<'_, BTreeSet<usize>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Registers `p` as live.
    pub(crate) fn insert<T>(&self, p: *const T) {
        self.set().insert(p as usize);
    }

    /// `true` when `p` is live.
    pub(crate) fn contains<T>(&self, p: *const T) -> bool {
        self.set().contains(&(p as usize))
    }

    /// Unregisters `p`; `false` when it was not live.
    pub(crate) fn remove<T>(&self, p: *const T) -> bool {
        self.set().remove(&(p as usize))
    }

    /// Boxes `v`, registers the box as a live handle and writes it through `out`.
    ///
    /// # Safety
    /// A non-null `out` is valid for a write.
    pub(crate) unsafe fn give<T>(&self, out: *mut *mut T, v: T) -> Result<(), Fail> {
        if out.is_null() {
            return Err(Fail::Null("out"));
        }
        let p = Box::into_raw(Box::new(v));
        self.insert(p);
        // SAFETY: non-null and valid for writes (caller).
        unsafe { out.write(p) };
        Ok(())
    }

    /// The value behind the live handle `p` (argument `name`, a `kind` such as
    /// `ct_stream`), or why it cannot be used.
    ///
    /// # Safety
    /// Every handle registered in this set is a box of `T` from [`give`](Self::give),
    /// freed only by [`free`](Self::free); one handle is not used from two threads at
    /// once (the header says so).
    pub(crate) unsafe fn get<'a, T>(
        &self,
        p: *mut T,
        name: &'static str,
        kind: &'static str,
    ) -> Result<&'a mut T, Fail> {
        if p.is_null() {
            return Err(Fail::Null(name));
        }
        if !self.contains(p) {
            return Err(Fail::Handle(name, kind));
        }
        // SAFETY: a live handle (the caller's contract on the set).
        Ok(unsafe { &mut *p })
    }

    /// Unregisters and drops the value behind the live handle `p`.
    ///
    /// # Safety
    /// As [`get`](Self::get).
    pub(crate) unsafe fn free<T>(
        &self,
        p: *mut T,
        name: &'static str,
        kind: &'static str,
    ) -> Result<(), Fail> {
        if p.is_null() {
            return Err(Fail::Null(name));
        }
        if !self.remove(p) {
            return Err(Fail::Handle(name, kind));
        }
        // SAFETY: `p` was live: a box from `give`, now unregistered, so dropped once.
        drop(unsafe { Box::from_raw(p) });
        Ok(())
    }
}
