//! NumPy's `.npz` archives: a zip file with one `.npy` member per named array, as
//! `np.savez` (members stored) and `np.savez_compressed` (members deflated) write them.

use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::Path;

use ctensor_base::{DeviceType, Result};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipArchive, ZipWriter};

use super::npy::{self, Place};
use crate::core::tensor::Tensor;

fn save(
    path: &Path,
    arrays: &[(&str, &Tensor)],
    method: CompressionMethod,
    op: &'static str,
) -> Result<()> {
    let name = path.display().to_string();
    let place = Place { op, name: &name };
    for (i, (key, _)) in arrays.iter().enumerate() {
        if key.is_empty() {
            return Err(place.bad(
                "non-empty array names",
                format!("an empty name at position {i}"),
            ));
        }
        if arrays[..i].iter().any(|(k, _)| k == key) {
            return Err(place.bad("distinct array names", format!("'{key}' twice")));
        }
    }
    let file = File::create(path).map_err(|e| place.io(e))?;
    let mut zip = ZipWriter::new(BufWriter::with_capacity(1 << 20, file));
    for (key, t) in arrays {
        let member = format!("{name}:{key}.npy");
        let at = Place { op, name: &member };
        let bytes = (t.numel() as u64).saturating_mul(t.dtype().size_of() as u64);
        let options = SimpleFileOptions::default()
            .compression_method(method)
            // Zip64 records for members that may pass 4 GiB (header included).
            .large_file(bytes >= u32::MAX as u64 - (1 << 20));
        zip.start_file(format!("{key}.npy"), options)
            .map_err(|e| at.io(e))?;
        npy::write(t, &mut zip, at)?;
    }
    let mut w = zip.finish().map_err(|e| place.io(e))?;
    w.flush().map_err(|e| place.io(e))
}

/// Saves named tensors to a `.npz` archive with uncompressed members, as `np.savez(path,
/// **arrays)` does: `np.load(path)[name]` reads each back. Each member is written as by
/// [`Tensor::save_npy`].
///
/// Errors: `BadFile` for an empty or repeated name; `Io` when the file cannot be written.
pub fn save_npz(path: impl AsRef<Path>, arrays: &[(&str, &Tensor)]) -> Result<()> {
    save(path.as_ref(), arrays, CompressionMethod::Stored, "save_npz")
}

/// [`save_npz`] with deflated members, as `np.savez_compressed` writes them.
pub fn save_npz_compressed(path: impl AsRef<Path>, arrays: &[(&str, &Tensor)]) -> Result<()> {
    save(
        path.as_ref(),
        arrays,
        CompressionMethod::Deflated,
        "save_npz_compressed",
    )
}

/// Loads every array of a `.npz` archive (stored or deflated members) into host tensors,
/// in the archive's order, named as `np.load(path).files` names them (the member name
/// without `.npy`).
///
/// Errors: `Io` when the file cannot be read; `BadFile` when it is not a zip archive,
/// holds a member that is not a `.npy` file, or a member is malformed (as
/// [`Tensor::load_npy`] reports it, with the member's name).
pub fn load_npz(path: impl AsRef<Path>) -> Result<Vec<(String, Tensor)>> {
    let name = path.as_ref().display().to_string();
    let op = "load_npz";
    let place = Place { op, name: &name };
    let file = File::open(path.as_ref()).map_err(|e| place.io(e))?;
    let mut zip = ZipArchive::new(BufReader::with_capacity(1 << 20, file))
        .map_err(|e| place.bad("a zip archive of .npy files", e.to_string()))?;
    let mut out = Vec::with_capacity(zip.len());
    for i in 0..zip.len() {
        let mut member = zip
            .by_index(i)
            .map_err(|e| place.bad(format!("a readable member {i}"), e.to_string()))?;
        let member_name = member
            .name()
            .map_err(|e| place.bad(format!("a readable name for member {i}"), e.to_string()))?
            .into_owned();
        let Some(key) = member_name.strip_suffix(".npy") else {
            return Err(place.bad("only .npy members", format!("the member '{member_name}'")));
        };
        let full = format!("{name}:{member_name}");
        let at = Place { op, name: &full };
        let size = member.size();
        let t = npy::read(&mut member, Some(size), at)?;
        out.push((key.to_string(), t));
    }
    Ok(out)
}

/// [`load_npz`] onto `device`.
pub fn load_npz_to(path: impl AsRef<Path>, device: DeviceType) -> Result<Vec<(String, Tensor)>> {
    let mut all = load_npz(path)?;
    if device != DeviceType::Cpu {
        for (_, t) in &mut all {
            *t = t.to_device(device)?;
        }
    }
    Ok(all)
}
