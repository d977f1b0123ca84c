//! A short tour of the container: creation, views, maps over a caller's array, casts and
//! printing. Run with `make demo` (or `cargo run --release --example tour`).

use ctensor::{c64, DataType, DeviceType, Order, Tensor, TensorMap};

fn main() -> ctensor::Result<()> {
    let cpu = DeviceType::Cpu;

    // A 3 x 4 matrix of f64, and zero-copy views of it.
    let a = Tensor::arange(DataType::Double, cpu, 0.0, 12.0, 1.0)?.reshape(&[3, -1])?;
    println!("a =\n{a}\n");
    println!("a.t() (a view, no copy) =\n{}\n", a.t()?);
    println!("a.index(1) (row 1, a view) =\n{}\n", a.index(1)?);
    println!(
        "a.slice([1, 1], [2, 3]) (a deep copy) =\n{}\n",
        a.slice(&[1, 1], &[2, 3])?
    );

    // Complex numbers, conjugation and casts.
    let z = Tensor::from_slice(
        &[
            c64::new(1.0, 2.0),
            c64::new(-0.5, 0.0),
            c64::new(0.0, -3.25),
            c64::new(2.0, 1e-3),
        ],
        &[2, 2],
    )?;
    println!("z =\n{z}\n");
    println!("conj(z) =\n{}\n", z.conj()?);
    println!("imag(z) (a view of f64) =\n{}\n", z.imag()?);
    println!("z as c32 =\n{}\n", z.cast(DataType::ComplexFloat)?);

    // Write into an array that "Fortran" owns, in column-major order.
    let mut fortran = vec![0.0f64; 6];
    // SAFETY: `fortran` outlives the map and is only touched through it meanwhile.
    let mut map = unsafe { TensorMap::new(fortran.as_mut_ptr(), cpu, &[2, 3], Order::ColMajor)? };
    map.sync(&a.slice(&[0, 0], &[2, 3])?)?;
    println!("map over a Fortran array A(2,3) =\n{map}");
    drop(map);
    println!("its memory, column by column: {fortran:?}\n");

    // Big tensors print summarised; bad input is an error, not a crash.
    let big = Tensor::arange(DataType::Float, cpu, 0.0, 1e6, 1.0)?.reshape(&[1000, -1])?;
    println!("big =\n{big}\n");
    match Tensor::ones(DataType::Double, cpu, &[4])?.reshape(&[3, -1]) {
        Ok(_) => unreachable!("4 elements cannot be 3 x n"),
        Err(e) => println!("reshape [4] -> [3, -1]: error: {e}"),
    }
    match Tensor::new(DataType::Double, DeviceType::Gpu, &[4]) {
        Ok(_) => println!("GPU tensor created"),
        Err(e) => println!("GPU tensor: error: {e}"),
    }
    Ok(())
}
