//! `.npy`/`.npz` files: round trips for every dtype, layout and device; files written by
//! NumPy itself read bit for bit, and files ctensor writes read by NumPy
//! (tests/python/npy_files.py, with NumPy and ml_dtypes from `make test`'s virtual
//! environment); malformed files, every truncation and hostile headers give errors.
#![deny(unused_must_use)]

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{on, rng, TestResult};
use ctensor_aten::io::{load_npz, load_npz_to, save_npz, save_npz_compressed};
use ctensor_aten::{
    bf16, c32, c64, f16, DataType, Device, DeviceType, Error, Order, Scalar, Tensor,
};

/// What a helper that can fail returns.
type Fallible<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// A fresh directory for one test.
fn scratch(name: &str) -> Fallible<PathBuf> {
    Ok({
        let d = std::env::temp_dir().join(format!("ctensor-npy-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d)?;
        d
    })
}

/// The elements of `v` as bytes (the element types are plain data).
fn bytes_of<T: Scalar>(v: &[T]) -> Vec<u8> {
    // SAFETY: every Scalar is a plain-data type without padding; the slice covers
    // exactly `size_of_val(v)` initialised bytes.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<u8>(), std::mem::size_of_val(v)) }
        .to_vec()
}

/// A tensor's elements in row-major order, as bytes, read through `to_vec`.
fn tensor_bytes(t: &Tensor) -> Fallible<Vec<u8>> {
    Ok({
        match t.dtype() {
            DataType::Float => bytes_of(&t.to_vec::<f32>()?),
            DataType::Double => bytes_of(&t.to_vec::<f64>()?),
            DataType::Int => bytes_of(&t.to_vec::<i32>()?),
            DataType::Int64 => bytes_of(&t.to_vec::<i64>()?),
            DataType::ComplexFloat => bytes_of(&t.to_vec::<c32>()?),
            DataType::ComplexDouble => bytes_of(&t.to_vec::<c64>()?),
            DataType::Half => bytes_of(&t.to_vec::<f16>()?),
            DataType::BFloat16 => bytes_of(&t.to_vec::<bf16>()?),
        }
    })
}

/// `n` values of `T` with NaN, ±inf and -0 first for the floating types.
fn values<T: Scalar>(seed: u64, n: usize) -> Vec<T> {
    let mut v = common::random_vec::<T>(&mut rng(seed), n);
    if !T::DTYPE.is_integer() {
        let special = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0];
        for (x, s) in v.iter_mut().zip(special) {
            *x = T::cast_from(c64::new(s, -s));
        }
    }
    v
}

/// The three layouts a tensor of `shape` comes in: row-major, column-major (a permuted
/// row-major tensor of the reversed shape) and a strided view (every other row of a
/// taller tensor). Each with its row-major elements.
fn layouts<T: Scalar>(seed: u64, shape: &[usize]) -> Fallible<Vec<(&'static str, Tensor, Vec<T>)>> {
    Ok({
        let n: usize = shape.iter().product();
        let v = values::<T>(seed, n);
        let c = Tensor::from_slice(&v, shape)?;
        let f = common::column_major(&c);
        let mut out = vec![("row-major", c, v.clone()), ("column-major", f, v.clone())];
        if !shape.is_empty() {
            let mut tall = shape.to_vec();
            tall[0] *= 2;
            let mut big = values::<T>(seed + 1, tall.iter().product());
            let row: usize = shape[1..].iter().product();
            for i in 0..shape[0] {
                big[2 * i * row..(2 * i + 1) * row].copy_from_slice(&v[i * row..(i + 1) * row]);
            }
            let mut split = vec![shape[0], 2];
            split.extend_from_slice(&shape[1..]);
            let strided = Tensor::from_slice(&big, &tall)?
                .reshape(&split.iter().map(|&d| d as i64).collect::<Vec<_>>())?
                .narrow(1, 0, 1)?
                .squeeze(1)?;
            out.push(("strided view", strided, v));
        }
        out
    })
}

const SHAPES: [&[usize]; 9] = [
    &[],
    &[0],
    &[1],
    &[7],
    &[300],
    &[3, 5],
    &[2, 3, 4],
    &[0, 4],
    &[4, 1, 3],
];

fn round_trip<D: Device, T: Scalar>() -> TestResult {
    let dir = scratch(&format!("round-trip-{:?}-{}", D::TYPE, T::DTYPE))?;
    for (k, shape) in SHAPES.iter().enumerate() {
        for (layout, t, want) in layouts::<T>(k as u64, shape)? {
            let what = format!("{} {shape:?} {layout} on {:?}", T::DTYPE, D::TYPE);
            let path = dir.join(format!("{k}-{}.npy", layout.replace(' ', "-")));
            let t = on::<D>(t);
            t.save_npy(&path)?;
            let back = Tensor::load_npy_to(&path, D::TYPE)?;
            assert_eq!(back.dtype(), T::DTYPE, "{what}");
            assert_eq!(back.device(), D::TYPE, "{what}");
            assert_eq!(back.dims(), *shape, "{what}");
            assert_eq!(
                tensor_bytes(&back.to_device(DeviceType::Cpu)?)?,
                bytes_of(&want),
                "{what}: elements (bit for bit)"
            );
            let fortran_only = shape.iter().filter(|&&d| d > 1).count() > 1;
            if layout == "column-major" && fortran_only {
                assert!(
                    back.is_fortran_contiguous() && !back.is_contiguous(),
                    "{what}: a column-major tensor must come back column-major"
                );
            } else {
                assert!(back.is_contiguous(), "{what}: expected row-major");
            }
            // Header (a multiple of 64 bytes, as NumPy pads it) plus the data, nothing more.
            let len = std::fs::metadata(&path)?.len() as usize;
            let data = want.len() * std::mem::size_of::<T>();
            assert!(
                len >= data + 64 && (len - data).is_multiple_of(64),
                "{what}: {len} bytes"
            );
        }
    }
    std::fs::remove_dir_all(dir)?;
    Ok(())
}

device_test!(round_trip_every_dtype_and_layout, D -> Result {
    for_all_dtypes!(round_trip, D);
    Ok(())
});

#[test]
fn streams_hold_several_arrays_back_to_back() -> TestResult {
    let a = Tensor::from_slice(&values::<f64>(1, 6), &[2, 3])?;
    let b = Tensor::from_slice(&values::<c32>(2, 4), &[4])?;
    let c = a.t()?;
    let mut buf = Vec::new();
    for t in [&a, &b, &c] {
        t.write_npy(&mut buf)?;
    }
    let mut r = &buf[..];
    for t in [&a, &b, &c] {
        let got = Tensor::read_npy(&mut r)?;
        assert_eq!(got.dims(), t.dims());
        assert_eq!(tensor_bytes(&got)?, tensor_bytes(t)?);
    }
    assert!(r.is_empty(), "each read stops at its array's end");
    let e = Tensor::read_npy(&mut r).unwrap_err();
    assert!(matches!(e, Error::BadFile { .. }), "{e}");
    Ok(())
}

/// A `.npy` file built by hand: `version`, the header text (padded as NumPy pads it) and
/// the data bytes.
fn craft(version: (u8, u8), header: &str, data: &[u8]) -> Vec<u8> {
    let len_bytes = if version.0 == 1 { 2 } else { 4 };
    let mut text = header.to_string();
    while !(6 + 2 + len_bytes + text.len() + 1).is_multiple_of(64) {
        text.push(' ');
    }
    text.push('\n');
    let mut out = b"\x93NUMPY".to_vec();
    out.extend([version.0, version.1]);
    if version.0 == 1 {
        out.extend((text.len() as u16).to_le_bytes());
    } else {
        out.extend((text.len() as u32).to_le_bytes());
    }
    out.extend(text.as_bytes());
    out.extend(data);
    out
}

#[test]
fn big_endian_and_later_versions_read_by_hand() -> TestResult {
    let v: Vec<f64> = values(3, 6);
    let mut be = Vec::new();
    for x in &v {
        be.extend(x.to_be_bytes());
    }
    let file = craft(
        (1, 0),
        "{'descr': '>f8', 'fortran_order': True, 'shape': (2, 3), }",
        &be,
    );
    let t = Tensor::read_npy(&mut &file[..])?;
    assert!(t.is_fortran_contiguous() && !t.is_contiguous());
    // Column-major data: element (i, j) is v[i + 2 j].
    let want: Vec<f64> = (0..2)
        .flat_map(|i| (0..3).map(move |j| (i, j)))
        .map(|(i, j)| v[i + 2 * j])
        .collect();
    assert_eq!(bytes_of(&t.to_vec::<f64>()?), bytes_of(&want));

    // Complex: each part swapped on its own, the real part first.
    let z: Vec<c32> = values(4, 3);
    let mut be = Vec::new();
    for x in &z {
        be.extend(x.re.to_be_bytes());
        be.extend(x.im.to_be_bytes());
    }
    for version in [(1, 0), (2, 0), (3, 0)] {
        let file = craft(
            version,
            "{'descr': '>c8', 'fortran_order': False, 'shape': (3,), }",
            &be,
        );
        let t = Tensor::read_npy(&mut &file[..])?;
        assert_eq!(bytes_of(&t.to_vec::<c32>()?), bytes_of(&z));
    }
    // Version 3 headers are UTF-8; key order does not matter; bf16 as raw 2 bytes.
    let file = craft(
        (3, 0),
        "{'shape': (2,), 'fortran_order': False, 'descr': '|V2'}",
        &[0x80, 0x3f, 0x00, 0xc0],
    );
    let t = Tensor::read_npy(&mut &file[..])?;
    assert_eq!(
        t.to_vec::<bf16>()?,
        [bf16::from_f32(1.0), bf16::from_f32(-2.0)]
    );
    Ok(())
}

fn bad(file: &[u8]) -> Error {
    Tensor::read_npy(&mut &file[..]).expect_err("a malformed file must be refused")
}

#[test]
fn malformed_headers_are_errors_that_say_what_was_expected() -> TestResult {
    let ok = "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }";
    let data = [0u8; 16];
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (b"\x93NUMPZ\x01\x00".to_vec(), "NPY magic"),
        (b"PK\x03\x04 not npy".to_vec(), "NPY magic"),
        (craft((4, 0), ok, &data), "version 4.0"),
        (craft((1, 1), ok, &data), "version 1.1"),
        (
            craft(
                (1, 0),
                "{'descr': '<u2', 'fortran_order': False, 'shape': (2,), }",
                &data,
            ),
            "'<u2'",
        ),
        (
            craft(
                (1, 0),
                "{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }",
                &data,
            ),
            "'|b1'",
        ),
        (
            craft(
                (1, 0),
                "{'descr': '<f16', 'fortran_order': False, 'shape': (2,), }",
                &data,
            ),
            "'<f16'",
        ),
        (
            craft(
                (1, 0),
                "{'descr': '<x8', 'fortran_order': False, 'shape': (2,), }",
                &data,
            ),
            "'<x8'",
        ),
        (
            craft(
                (1, 0),
                "{'descr': '|O', 'fortran_order': False, 'shape': (2,), }",
                &data,
            ),
            "'|O'",
        ),
        (
            craft(
                (1, 0),
                "{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (2,), }",
                &data,
            ),
            "structured",
        ),
        (
            craft(
                (1, 0),
                "{'descr': '<f8', 'fortran_order': 0, 'shape': (2,), }",
                &data,
            ),
            "fortran_order",
        ),
        (
            craft((1, 0), "{'descr': '<f8', 'shape': (2,), }", &data),
            "'fortran_order'",
        ),
        (
            craft(
                (1, 0),
                "{'descr': '<f8', 'fortran_order': False, 'shape': (-2,), }",
                &data,
            ),
            "sizes >= 0",
        ),
        (
            craft(
                (1, 0),
                "{'descr': '<f8', 'fortran_order': False, 'shape': [2], }",
                &data,
            ),
            "tuple",
        ),
        (
            craft(
                (1, 0),
                "{'descr': '<f8', 'fortran_order': False, 'shape': (2.5,), }",
                &data,
            ),
            "sizes",
        ),
        (
            craft(
                (1, 0),
                "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999999,), }",
                &data,
            ),
            "fit in usize",
        ),
        (
            craft(
                (1, 0),
                "{'descr': '<f8', 'fortran_order': False, 'shape': (2,)",
                &data,
            ),
            "dict literal",
        ),
        (craft((1, 0), "[1, 2, 3]", &data), "dict literal"),
        (craft((2, 0), "{'descr': '\u{e9}'}", &data), "descr"),
    ];
    for (file, needle) in cases {
        let e = bad(&file);
        let msg = e.to_string();
        assert!(
            matches!(e, Error::BadFile { .. }) && msg.contains(needle),
            "expected BadFile naming {needle:?}, got: {msg}"
        );
    }
    // A header longer than any NumPy writes is refused before it is read.
    let mut huge = b"\x93NUMPY\x02\x00".to_vec();
    huge.extend(u32::MAX.to_le_bytes());
    let msg = bad(&huge).to_string();
    assert!(msg.contains("at most 100000 bytes"), "{msg}");
    // Invalid UTF-8 in a version-3 header.
    let mut v3 = craft(
        (3, 0),
        "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }",
        &data,
    );
    v3[12] = 0xff;
    assert!(bad(&v3).to_string().contains("UTF-8"));
    Ok(())
}

#[test]
fn every_truncation_is_an_error_never_a_panic() -> TestResult {
    let t = Tensor::from_slice(&values::<c64>(5, 12), &[3, 4])?;
    let mut file = Vec::new();
    t.write_npy(&mut file)?;
    for cut in 0..file.len() {
        let e = bad(&file[..cut]);
        assert!(
            matches!(e, Error::BadFile { .. }) && e.to_string().contains("truncated"),
            "cut at {cut}: {e}"
        );
    }
    // The same through a file, where the size is known before anything is allocated.
    let dir = scratch("truncated")?;
    let path = dir.join("cut.npy");
    std::fs::write(&path, &file[..file.len() - 1])?;
    let msg = Tensor::load_npy(&path).unwrap_err().to_string();
    assert!(
        msg.contains("192 data bytes") && msg.contains("only 191"),
        "{msg}"
    );
    assert!(msg.contains(path.to_str().unwrap()), "{msg}");
    std::fs::remove_dir_all(dir)?;
    Ok(())
}

#[test]
fn hostile_shapes_fail_before_allocating() -> TestResult {
    let dir = scratch("hostile")?;
    // 2^40 elements promised by a 128-byte file: refused from the file's size.
    let path = dir.join("huge.npy");
    let file = craft(
        (1, 0),
        "{'descr': '<f8', 'fortran_order': False, 'shape': (1099511627776,), }",
        &[0; 8],
    );
    std::fs::write(&path, &file)?;
    let msg = Tensor::load_npy(&path).unwrap_err().to_string();
    assert!(
        msg.contains("truncated") && msg.contains("8796093022208 data bytes"),
        "{msg}"
    );
    // An element count that overflows.
    let file = craft(
        (1, 0),
        "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4), }",
        &[],
    );
    let e = bad(&file);
    assert!(matches!(e, Error::Overflow { .. }), "{e}");
    // Zero elements with huge other dimensions is a valid, empty array.
    let file = craft(
        (1, 0),
        "{'descr': '<c16', 'fortran_order': True, 'shape': (0, 4294967296, 4294967296), }",
        &[],
    );
    let t = Tensor::read_npy(&mut &file[..])?;
    assert_eq!(t.dims(), [0, 1 << 32, 1 << 32]);
    std::fs::remove_dir_all(dir)?;
    Ok(())
}

#[test]
fn file_system_errors_name_the_path() -> TestResult {
    let e = Tensor::load_npy("/nonexistent/ctensor/a.npy").unwrap_err();
    assert!(matches!(e, Error::Io { .. }), "{e}");
    assert!(e.to_string().contains("/nonexistent/ctensor/a.npy"), "{e}");
    let t = Tensor::zeros(DataType::Float, DeviceType::Cpu, &[2])?;
    let e = t.save_npy("/nonexistent/ctensor/a.npy").unwrap_err();
    assert!(matches!(e, Error::Io { .. }), "{e}");
    let e = load_npz("/nonexistent/ctensor/a.npz").unwrap_err();
    assert!(matches!(e, Error::Io { .. }), "{e}");
    Ok(())
}

#[test]
fn saving_holds_a_read_borrow() -> TestResult {
    // A tensor borrowed mutably cannot be saved (the bytes could change under the write).
    let dir = scratch("borrow")?;
    let mut t = Tensor::zeros(DataType::Double, DeviceType::Cpu, &[4])?;
    let view = t.share();
    let _guard = t.data_mut::<f64>()?;
    let e = view.save_npy(dir.join("b.npy")).unwrap_err();
    assert!(matches!(e, Error::BorrowConflict { .. }), "{e}");
    std::fs::remove_dir_all(dir)?;
    Ok(())
}

device_test!(npz_round_trip_stored_and_deflated, D -> Result {
    let dir = scratch(&format!("npz-{:?}", D::TYPE))?;
    let psi = Tensor::from_slice(&values::<c64>(1, 15), &[5, 3])?;
    let e = Tensor::from_slice(&values::<f64>(2, 9), &[9])?;
    let k = Tensor::from_slice(&values::<i32>(3, 4), &[2, 2])?;
    let h = Tensor::from_slice(&values::<bf16>(4, 12), &[4, 3])?.t()?;
    let empty = Tensor::zeros(DataType::Half, DeviceType::Cpu, &[0, 7])?;
    let all: Vec<(&str, Tensor)> = vec![("psi", psi), ("e", e), ("k", k), ("h", h), ("empty", empty)];
    let on_d: Vec<Tensor> = all.iter().map(|(_, t)| on::<D>(t.share())).collect();
    let named: Vec<(&str, &Tensor)> = all.iter().zip(&on_d).map(|((n, _), t)| (*n, t)).collect();
    for (file, compressed) in [("s.npz", false), ("d.npz", true)] {
        let path = dir.join(file);
        if compressed {
            save_npz_compressed(&path, &named)?;
        } else {
            save_npz(&path, &named)?;
        }
        let back = load_npz_to(&path, D::TYPE)?;
        assert_eq!(back.len(), all.len());
        for ((name, want), (got_name, got)) in all.iter().zip(&back) {
            assert_eq!(name, got_name);
            assert_eq!(got.device(), D::TYPE);
            assert_eq!(got.dims(), want.dims(), "{name}");
            let got = got.to_device(DeviceType::Cpu)?;
            assert_eq!(tensor_bytes(&got)?, tensor_bytes(want)?, "{file} {name}");
        }
        assert!(back[3].1.is_fortran_contiguous(), "a transposed member stays column-major");
    }
    std::fs::remove_dir_all(dir)?;
    Ok(())
});

#[test]
fn npz_errors() -> TestResult {
    let dir = scratch("npz-errors")?;
    let t = Tensor::zeros(DataType::Float, DeviceType::Cpu, &[2])?;
    let e = save_npz(dir.join("a.npz"), &[("x", &t), ("x", &t)]).unwrap_err();
    assert!(e.to_string().contains("'x' twice"), "{e}");
    let e = save_npz(dir.join("a.npz"), &[("", &t)]).unwrap_err();
    assert!(e.to_string().contains("empty name"), "{e}");
    // Not a zip archive.
    t.save_npy(dir.join("plain.npy"))?;
    let e = load_npz(dir.join("plain.npy")).unwrap_err();
    assert!(
        matches!(e, Error::BadFile { .. }) && e.to_string().contains("zip"),
        "{e}"
    );
    // A member that is not an array.
    {
        use std::io::Write;
        let file = std::fs::File::create(dir.join("other.npz"))?;
        let mut z = zip::ZipWriter::new(file);
        z.start_file("readme.txt", zip::write::SimpleFileOptions::default())?;
        z.write_all(b"hello")?;
        z.finish()?;
    }
    let e = load_npz(dir.join("other.npz")).unwrap_err();
    assert!(e.to_string().contains("'readme.txt'"), "{e}");
    // A malformed member: the message names the archive and the member.
    {
        use std::io::Write;
        let file = std::fs::File::create(dir.join("bad.npz"))?;
        let mut z = zip::ZipWriter::new(file);
        z.start_file("a.npy", zip::write::SimpleFileOptions::default())?;
        z.write_all(&craft(
            (1, 0),
            "{'descr': '<f8', 'fortran_order': False, 'shape': (3,), }",
            &[0; 8],
        ))?;
        z.finish()?;
    }
    let e = load_npz(dir.join("bad.npz")).unwrap_err();
    assert!(
        e.to_string().contains("bad.npz:a.npy") && e.to_string().contains("truncated"),
        "{e}"
    );
    std::fs::remove_dir_all(dir)?;
    Ok(())
}

// ---- NumPy itself ----------------------------------------------------------------------

/// The Python with NumPy and ml_dtypes: `CTENSOR_PYTHON`, else the virtual environment
/// `make test` makes. `None` (with a SKIP line) when there is none, which fails instead
/// under `CTENSOR_REQUIRE_PYTHON` (set by `make test`).
fn python() -> Option<PathBuf> {
    let candidate = std::env::var_os("CTENSOR_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/py-venv/bin/python")
        });
    let works = Command::new(&candidate)
        .args(["-c", "import numpy, ml_dtypes"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if works {
        return Some(candidate);
    }
    let why = format!("{} cannot import numpy and ml_dtypes", candidate.display());
    assert!(
        std::env::var_os("CTENSOR_REQUIRE_PYTHON").is_none(),
        "CTENSOR_REQUIRE_PYTHON is set but {why}"
    );
    println!("SKIP: NumPy interop: {why} (make test sets it up: scripts/py-env.sh)");
    None
}

fn run_python(py: &Path, mode: &str, dir: &Path) -> TestResult {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/npy_files.py");
    let out = Command::new(py).arg(script).arg(mode).arg(dir).output()?;
    assert!(
        out.status.success(),
        "npy_files.py {mode} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    print!("{}", String::from_utf8_lossy(&out.stdout));
    Ok(())
}

fn dtype_code(d: DataType) -> &'static str {
    match d {
        DataType::Float => "f4",
        DataType::Double => "f8",
        DataType::Int => "i4",
        DataType::Int64 => "i8",
        DataType::ComplexFloat => "c8",
        DataType::ComplexDouble => "c16",
        DataType::Half => "f2",
        DataType::BFloat16 => "bf16",
    }
}

#[test]
fn files_written_by_numpy_load_bit_for_bit() -> TestResult {
    let Some(py) = python() else { return Ok(()) };
    let dir = scratch("from-numpy")?;
    run_python(&py, "write", &dir)?;
    let manifest = std::fs::read_to_string(dir.join("manifest.txt"))?;
    let mut checked = 0;
    let npz: Vec<Vec<(String, Tensor)>> = ["stored.npz", "deflated.npz"]
        .iter()
        .map(|f| load_npz(dir.join(f)).unwrap())
        .collect();
    for line in manifest.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (name, code, shape, fortran) = (f[0], f[1], f[2], f[3] == "1");
        let dims: Vec<usize> = if shape == "-" {
            vec![]
        } else {
            shape.split(',').map(|s| s.parse().unwrap()).collect()
        };
        let want = std::fs::read(dir.join(format!("{name}.bin")))?;
        let tensors: Vec<Tensor> = match name.strip_prefix("npz_") {
            Some(key) => npz
                .iter()
                .map(|all| all.iter().find(|(k, _)| k == key).unwrap().1.share())
                .collect(),
            None => vec![Tensor::load_npy(dir.join(format!("{name}.npy")))?],
        };
        for t in tensors {
            assert_eq!(dtype_code(t.dtype()), code, "{name}");
            assert_eq!(t.dims(), dims, "{name}");
            let order = if fortran {
                Order::ColMajor
            } else {
                Order::RowMajor
            };
            assert_eq!(
                t.strides(),
                order.strides(&dims),
                "{name}: fortran_order {fortran}"
            );
            assert_eq!(tensor_bytes(&t)?, want, "{name}: elements differ");
            checked += 1;
        }
    }
    assert!(checked > 100, "only {checked} arrays checked");
    println!("ctensor read {checked} arrays written by NumPy: all bit-identical");
    std::fs::remove_dir_all(dir)?;
    Ok(())
}

/// Writes `t` (whose row-major elements are `want`) as `name.npy` and its manifest line.
fn emit<T: Scalar>(
    dir: &Path,
    lines: &mut Vec<String>,
    name: &str,
    t: &Tensor,
    want: &[T],
) -> TestResult {
    t.save_npy(dir.join(format!("{name}.npy")))?;
    std::fs::write(dir.join(format!("{name}.bin")), bytes_of(want))?;
    lines.push(manifest_line(name, t));
    Ok(())
}

fn manifest_line(name: &str, t: &Tensor) -> String {
    let shape: Vec<String> = t.dims().iter().map(|d| d.to_string()).collect();
    let shape = if shape.is_empty() {
        "-".to_string()
    } else {
        shape.join(",")
    };
    // Written column-major only when the tensor is column-major and not also row-major.
    let fortran = t.is_fortran_contiguous() && !t.is_contiguous();
    format!(
        "{name} {} {shape} {}",
        dtype_code(t.dtype()),
        u8::from(fortran)
    )
}

fn emit_all<T: Scalar>(dir: &Path, lines: &mut Vec<String>) -> TestResult {
    for (k, shape) in SHAPES.iter().enumerate() {
        for (layout, t, want) in layouts::<T>(k as u64 + 40, shape)? {
            let name = format!("{}_{k}_{}", dtype_code(T::DTYPE), &layout[..3]);
            emit(dir, lines, &name, &t, &want)?;
        }
    }
    Ok(())
}

#[test]
fn files_written_by_ctensor_load_in_numpy() -> TestResult {
    let Some(py) = python() else { return Ok(()) };
    let dir = scratch("to-numpy")?;
    let mut lines = Vec::new();
    emit_all::<f32>(&dir, &mut lines)?;
    emit_all::<f64>(&dir, &mut lines)?;
    emit_all::<i32>(&dir, &mut lines)?;
    emit_all::<i64>(&dir, &mut lines)?;
    emit_all::<c32>(&dir, &mut lines)?;
    emit_all::<c64>(&dir, &mut lines)?;
    emit_all::<f16>(&dir, &mut lines)?;
    emit_all::<bf16>(&dir, &mut lines)?;
    // Archives: NumPy reads each member by its name.
    let psi_v = values::<c64>(9, 15);
    let psi = Tensor::from_slice(&psi_v, &[5, 3])?;
    let h_v = values::<f32>(10, 12);
    let h = Tensor::from_slice(&h_v, &[3, 4])?;
    let ht = h.t()?;
    let ht_v = ht.to_vec::<f32>()?;
    for (archive, compressed) in [("s.npz", false), ("d.npz", true)] {
        let arrays = [("psi", &psi), ("ht", &ht)];
        if compressed {
            save_npz_compressed(dir.join(archive), &arrays)?;
        } else {
            save_npz(dir.join(archive), &arrays)?;
        }
        let line = manifest_line(&format!("npz:{archive}:psi"), &psi);
        std::fs::write(dir.join(format!("{archive}.psi.bin")), bytes_of(&psi_v))?;
        lines.push(line);
        lines.push(manifest_line(&format!("npz:{archive}:ht"), &ht));
        std::fs::write(dir.join(format!("{archive}.ht.bin")), bytes_of(&ht_v))?;
    }
    std::fs::write(dir.join("manifest.txt"), lines.join("\n") + "\n")?;
    run_python(&py, "check", &dir)?;
    std::fs::remove_dir_all(dir)?;
    Ok(())
}

#[test]
fn column_major_tensors_are_written_without_a_copy_in_numpy_order() -> TestResult {
    // The data section of a column-major tensor's file is its buffer, byte for byte.
    let v = values::<f64>(11, 12);
    let t = Tensor::new_in_order(DataType::Double, DeviceType::Cpu, &[3, 4], Order::ColMajor)?;
    let mut t = t;
    t.data_mut::<f64>()?.copy_from_slice(&v);
    let mut file = Vec::new();
    t.write_npy(&mut file)?;
    assert!(String::from_utf8_lossy(&file[..128]).contains("'fortran_order': True"));
    assert_eq!(&file[file.len() - 96..], &bytes_of(&v)[..]);
    Ok(())
}
