//! Files: NumPy's `.npy` (one array) and `.npz` (named arrays in a zip archive).
//!
//! ```
//! use ctensor_aten::{Tensor, DataType, DeviceType};
//! let dir = std::env::temp_dir().join(format!("ctensor-doc-npy-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! let a = Tensor::arange(DataType::Double, DeviceType::Cpu, 0.0, 6.0, 1.0)?.reshape(&[2, 3])?;
//! a.save_npy(dir.join("a.npy"))?;               // np.load("a.npy") reads it
//! let b = Tensor::load_npy(dir.join("a.npy"))?;
//! assert_eq!(b.to_vec::<f64>()?, a.to_vec::<f64>()?);
//! ctensor_aten::io::save_npz(dir.join("ab.npz"), &[("a", &a), ("at", &a.t()?)])?;
//! let all = ctensor_aten::io::load_npz(dir.join("ab.npz"))?;
//! assert_eq!(all[1].0, "at");
//! assert!(all[1].1.is_fortran_contiguous()); // written and read back without a transpose
//! # std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod npy;
mod npz;

pub use npz::{load_npz, load_npz_to, save_npz, save_npz_compressed};
