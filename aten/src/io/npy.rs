//! NumPy's `.npy` format: one array per file, a short text header and the raw elements.
//!
//! Reading takes format versions 1.0, 2.0 and 3.0 and both byte orders; writing uses
//! version 1.0 (2.0 when the header needs it, as NumPy does) in the machine's byte order.
//! A Fortran-ordered file becomes a column-major tensor and a column-major tensor is
//! written with `fortran_order: True`: neither direction transposes.
//!
//! Element types, as NumPy spells them (little-endian shown):
//!
//! | ctensor | descr | NumPy |
//! |---|---|---|
//! | f32, f64 | `<f4`, `<f8` | `float32`, `float64` |
//! | i32, i64 | `<i4`, `<i8` | `int32`, `int64` |
//! | c32, c64 | `<c8`, `<c16` | `complex64`, `complex128` |
//! | f16 | `<f2` | `float16` |
//! | bf16 | `<V2` | two raw bytes; `np.load(f).view(ml_dtypes.bfloat16)` |
//!
//! NumPy has no bfloat16 of its own; `ml_dtypes.bfloat16` arrays are saved by `np.save`
//! with the descr `<V2`, which ctensor writes too. On reading, any two-byte raw type
//! (`<V2`, `|V2`) is taken as bf16 bit patterns.

use std::fs::File;
use std::io::{BufReader, BufWriter, Read, Write};
use std::path::Path;

use ctensor_base::{DataType, DeviceType, Error, Result};
use npyz::{DType, TypeChar, TypeStr, WriteOptions, WriterBuilder};
use num_traits::ToPrimitive;
use py_literal::Value;

use crate::core::shape::Order;
use crate::core::tensor::Tensor;

/// The first six bytes of every `.npy` file.
const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// The longest header accepted. NumPy refuses headers over 10 000 bytes unless told
/// otherwise; this allows ten times that and still bounds what a bad file can ask for.
const MAX_HEADER: usize = 100_000;

/// Where a file's bytes come from or go to, for error messages.
#[derive(Clone, Copy)]
pub(crate) struct Place<'a> {
    /// The operation the caller called.
    pub op: &'static str,
    /// The path, or a stream's name, with an archive member after a colon.
    pub name: &'a str,
}

impl Place<'_> {
    /// A malformed-file error.
    pub(crate) fn bad(&self, expected: impl Into<String>, got: impl Into<String>) -> Error {
        Error::BadFile {
            op: self.op,
            path: self.name.to_string(),
            expected: expected.into(),
            got: got.into(),
        }
    }

    /// An operating-system error.
    pub(crate) fn io(&self, e: impl std::fmt::Display) -> Error {
        Error::Io {
            op: self.op,
            path: self.name.to_string(),
            detail: e.to_string(),
        }
    }
}

/// The descr ctensor writes for `dtype`, in this machine's byte order.
fn descr_of(dtype: DataType) -> String {
    let e = if cfg!(target_endian = "little") {
        '<'
    } else {
        '>'
    };
    let code = match dtype {
        DataType::Float => "f4",
        DataType::Double => "f8",
        DataType::Int => "i4",
        DataType::Int64 => "i8",
        DataType::ComplexFloat => "c8",
        DataType::ComplexDouble => "c16",
        DataType::Half => "f2",
        DataType::BFloat16 => "V2",
    };
    format!("{e}{code}")
}

const SUPPORTED: &str = "one of <f4 <f8 <i4 <i8 <c8 <c16 <f2 <V2 (bf16), in either byte order";

/// The dtype of a file's descr, and whether its bytes must be swapped.
fn dtype_of(descr: &str, place: Place<'_>) -> Result<(DataType, bool)> {
    let ts: TypeStr = descr
        .parse()
        .map_err(|e| place.bad(SUPPORTED, format!("descr '{descr}' ({e})")))?;
    let dtype = match (ts.type_char(), ts.size_field()) {
        (TypeChar::Float, 4) => DataType::Float,
        (TypeChar::Float, 8) => DataType::Double,
        (TypeChar::Int, 4) => DataType::Int,
        (TypeChar::Int, 8) => DataType::Int64,
        (TypeChar::Complex, 8) => DataType::ComplexFloat,
        (TypeChar::Complex, 16) => DataType::ComplexDouble,
        (TypeChar::Float, 2) => DataType::Half,
        (TypeChar::RawData, 2) => DataType::BFloat16,
        _ => {
            return Err(place.bad(
                SUPPORTED,
                format!("descr '{descr}' (convert it in NumPy first, e.g. a.astype('<f8'))"),
            ))
        }
    };
    let native = if cfg!(target_endian = "little") {
        npyz::Endianness::Little
    } else {
        npyz::Endianness::Big
    };
    // Raw bf16 bits ('V') have no byte order of their own: NumPy writes them as they lie.
    let swap = dtype != DataType::BFloat16 && ts.endianness() != native;
    Ok((dtype, swap))
}

/// What a `.npy` header says.
pub(crate) struct Header {
    /// The element type.
    pub dtype: DataType,
    /// `true` when the data's byte order is not the machine's.
    pub swap: bool,
    /// `true` for `fortran_order: True`.
    pub fortran: bool,
    /// The array's shape.
    pub dims: Vec<usize>,
    /// Bytes of element data that follow the header.
    pub data_bytes: u64,
}

/// Reads exactly `buf.len()` bytes, or says how many there were.
fn fill(r: &mut impl Read, buf: &mut [u8], what: &str, place: Place<'_>) -> Result<()> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) => {
                return Err(place.bad(
                    format!("{} bytes of {what}", buf.len()),
                    format!("only {got} (the file is truncated)"),
                ))
            }
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(place.io(e)),
        }
    }
    Ok(())
}

/// Reads the magic, version and header dict, leaving `r` at the first data byte.
pub(crate) fn read_header(r: &mut impl Read, place: Place<'_>) -> Result<Header> {
    let mut pre = [0u8; 8];
    fill(r, &mut pre, "magic and version", place)?;
    if &pre[..6] != MAGIC {
        return Err(place.bad(
            "the NPY magic \\x93NUMPY",
            format!("{} (not a .npy file)", pre[..6].escape_ascii()),
        ));
    }
    let (major, minor) = (pre[6], pre[7]);
    let len = match (major, minor) {
        (1, 0) => {
            let mut b = [0u8; 2];
            fill(r, &mut b, "header length", place)?;
            u16::from_le_bytes(b) as usize
        }
        (2, 0) | (3, 0) => {
            let mut b = [0u8; 4];
            fill(r, &mut b, "header length", place)?;
            u32::from_le_bytes(b) as usize
        }
        _ => {
            return Err(place.bad(
                "format version 1.0, 2.0 or 3.0",
                format!("version {major}.{minor}"),
            ))
        }
    };
    if len > MAX_HEADER {
        return Err(place.bad(
            format!("a header of at most {MAX_HEADER} bytes"),
            format!("{len} bytes"),
        ));
    }
    let mut raw = vec![0u8; len];
    fill(r, &mut raw, "header", place)?;
    // Versions 1 and 2 are latin-1, version 3 UTF-8.
    let text: String = if major == 3 {
        String::from_utf8(raw).map_err(|_| place.bad("a UTF-8 header", "invalid UTF-8"))?
    } else {
        raw.iter().map(|&b| b as char).collect()
    };
    let dict: Value = text
        .trim_end()
        .parse()
        .map_err(|e| place.bad("a Python dict literal as header", format!("{text:?} ({e})")))?;
    let Some(entries) = dict.as_dict() else {
        return Err(place.bad("a Python dict literal as header", format!("{text:?}")));
    };
    let key = |name: &str| {
        entries
            .iter()
            .find(|(k, _)| k.as_string().map(String::as_str) == Some(name))
            .map(|(_, v)| v)
            .ok_or_else(|| place.bad(format!("the header key '{name}'"), format!("{text:?}")))
    };
    let descr = key("descr")?;
    let Some(descr) = descr.as_string() else {
        return Err(place.bad(
            format!("a plain element type ({SUPPORTED})"),
            format!("descr {descr} (structured arrays are not tensors)"),
        ));
    };
    let (dtype, swap) = dtype_of(descr, place)?;
    let fortran = key("fortran_order")?
        .as_boolean()
        .ok_or_else(|| place.bad("fortran_order True or False", format!("{text:?}")))?;
    let shape = key("shape")?;
    let Some(items) = shape.as_tuple() else {
        return Err(place.bad("a tuple of sizes as shape", format!("{shape}")));
    };
    let mut dims = Vec::with_capacity(items.len());
    for v in items {
        match v.as_integer().and_then(|i| i.to_usize()) {
            Some(d) => dims.push(d),
            None => return Err(place.bad("sizes >= 0 that fit in usize", format!("shape {shape}"))),
        }
    }
    let numel = crate::core::shape::TensorShape::new(&dims).checked_numel(place.op)?;
    let data_bytes = (numel as u64)
        .checked_mul(dtype.size_of() as u64)
        .ok_or_else(|| Error::Overflow {
            op: place.op,
            what: format!("shape {dims:?} of {dtype} exceeds 2^64 bytes"),
        })?;
    Ok(Header {
        dtype,
        swap,
        fortran,
        dims,
        data_bytes,
    })
}

/// Reverses the bytes of every `part`-byte value in `bytes`.
fn swap_bytes(bytes: &mut [u8], part: usize) {
    for chunk in bytes.chunks_exact_mut(part) {
        chunk.reverse();
    }
}

/// Reads a whole `.npy` stream into a host tensor. `available`, when known, is how many
/// bytes the stream holds in all: a header that promises more data is refused before
/// anything is allocated.
pub(crate) fn read(r: &mut impl Read, available: Option<u64>, place: Place<'_>) -> Result<Tensor> {
    let mut counted = Counting { inner: r, n: 0 };
    let h = read_header(&mut counted, place)?;
    if let Some(total) = available {
        let left = total.saturating_sub(counted.n);
        if h.data_bytes > left {
            return Err(place.bad(
                format!(
                    "{} data bytes for shape {:?} of {}",
                    h.data_bytes, h.dims, h.dtype
                ),
                format!("only {left} (the file is truncated)"),
            ));
        }
    }
    let order = if h.fortran {
        Order::ColMajor
    } else {
        Order::RowMajor
    };
    let t = Tensor::new_in_order(h.dtype, DeviceType::Cpu, &h.dims, order)?;
    let n = h.data_bytes as usize;
    if n > 0 {
        let _guard = t.buffer.write(place.op)?;
        // SAFETY: `t` is a fresh dense tensor of `n` bytes at offset 0 that no one else
        // can reach; the write guard is held while the slice lives.
        let bytes = unsafe { std::slice::from_raw_parts_mut(t.elem_ptr(), n) };
        let what = format!("data for shape {:?} of {}", h.dims, h.dtype);
        fill(counted.inner, bytes, &what, place)?;
        if h.swap {
            let part = if h.dtype.is_complex() {
                h.dtype.size_of() / 2
            } else {
                h.dtype.size_of()
            };
            swap_bytes(bytes, part);
        }
    }
    Ok(t)
}

/// Counts the bytes read through it.
struct Counting<'a, R> {
    inner: &'a mut R,
    n: u64,
}

impl<R: Read> Read for Counting<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let k = self.inner.read(buf)?;
        self.n += k as u64;
        Ok(k)
    }
}

/// Writes `t` as a `.npy` stream: dense tensors as they lie in memory (column-major ones
/// with `fortran_order: True`), strided views through a row-major copy, device tensors
/// through a host copy.
pub(crate) fn write(t: &Tensor, w: &mut impl Write, place: Place<'_>) -> Result<()> {
    let host;
    let t = if t.device() == DeviceType::Cpu {
        t
    } else {
        host = t.to_device(DeviceType::Cpu)?;
        &host
    };
    let copy;
    let (t, fortran) = match t.dense_order() {
        Some(Order::RowMajor) => (t, false),
        Some(Order::ColMajor) => (t, true),
        None => {
            copy = t.contiguous()?;
            (&copy, false)
        }
    };
    let descr = descr_of(t.dtype());
    let ts: TypeStr = descr.parse().map_err(|e| Error::Internal {
        op: place.op,
        what: format!("npyz refused the descr {descr}: {e}"),
    })?;
    let dims: Vec<u64> = t.dims().iter().map(|&d| d as u64).collect();
    let order = if fortran {
        npyz::Order::Fortran
    } else {
        npyz::Order::C
    };
    WriteOptions::new_header_only()
        .dtype(DType::new_scalar(ts))
        .shape(&dims)
        .order(order)
        .writer(&mut *w)
        .write_header_only()
        .map_err(|e| place.io(e))?;
    let n = t.numel() * t.dtype().size_of();
    if n > 0 {
        let _guard = t.buffer.read(place.op)?;
        // SAFETY: `t` is dense, so its `n` bytes start at the first element and lie inside
        // the buffer; the read guard excludes writers while the slice lives.
        let bytes = unsafe { std::slice::from_raw_parts(t.elem_ptr(), n) };
        w.write_all(bytes).map_err(|e| place.io(e))?;
    }
    Ok(())
}

impl Tensor {
    /// Saves the tensor to a NumPy `.npy` file (see the [module docs](crate::io::npy)
    /// for the element types). Column-major tensors are written as they are, with
    /// `fortran_order: True`; other strided views through a row-major copy; device
    /// tensors through a host copy.
    ///
    /// Errors: `Io` when the file cannot be created or written.
    pub fn save_npy(&self, path: impl AsRef<Path>) -> Result<()> {
        let name = path.as_ref().display().to_string();
        let place = Place {
            op: "save_npy",
            name: &name,
        };
        let file = File::create(path.as_ref()).map_err(|e| place.io(e))?;
        let mut w = BufWriter::with_capacity(1 << 20, file);
        write(self, &mut w, place)?;
        w.flush().map_err(|e| place.io(e))
    }

    /// Writes the tensor in the `.npy` format to any writer (a socket, an archive
    /// member, a `Vec<u8>`), as [`save_npy`](Self::save_npy) does to a file.
    pub fn write_npy(&self, w: &mut impl Write) -> Result<()> {
        write(
            self,
            w,
            Place {
                op: "write_npy",
                name: "<writer>",
            },
        )
    }

    /// Loads a NumPy `.npy` file into a host tensor of the file's element type and
    /// shape, column-major when the file is Fortran-ordered. Format versions 1.0–3.0
    /// and either byte order are read.
    ///
    /// Errors: `Io` when the file cannot be opened or read; `BadFile` for a wrong magic,
    /// an unknown version, a header that does not parse, an element type ctensor does not
    /// have (the message lists those it has), or fewer data bytes than the shape needs.
    pub fn load_npy(path: impl AsRef<Path>) -> Result<Tensor> {
        let name = path.as_ref().display().to_string();
        let place = Place {
            op: "load_npy",
            name: &name,
        };
        let file = File::open(path.as_ref()).map_err(|e| place.io(e))?;
        let len = file.metadata().map_err(|e| place.io(e))?.len();
        read(
            &mut BufReader::with_capacity(1 << 20, file),
            Some(len),
            place,
        )
    }

    /// [`load_npy`](Self::load_npy) onto `device`.
    pub fn load_npy_to(path: impl AsRef<Path>, device: DeviceType) -> Result<Tensor> {
        let t = Tensor::load_npy(path)?;
        if device == DeviceType::Cpu {
            Ok(t)
        } else {
            t.to_device(device)
        }
    }

    /// Reads one `.npy` stream from any reader, as [`load_npy`](Self::load_npy) reads a
    /// file. The reader is left just after the array's data.
    pub fn read_npy(r: &mut impl Read) -> Result<Tensor> {
        read(
            r,
            None,
            Place {
                op: "read_npy",
                name: "<reader>",
            },
        )
    }
}
