//! The demo's output files: `bands.csv` and the band-structure plot `bands.svg`.

use std::path::PathBuf;

use super::*;

pub(crate) fn greek(name: &str) -> String {
    name.replace('G', "Γ")
}

pub(crate) fn write_csv(run: &Run, dir: &std::path::Path) -> Res<PathBuf> {
    let mut s = String::from("x,kx,ky,kz");
    let nb = run.samples.first().map_or(0, |s| s.2.len());
    for b in 1..=nb {
        let _ = write!(s, ",band{b}");
    }
    s.push('\n');
    for (x, k, e) in &run.samples {
        // Full precision (the shortest decimal that reads back to the same double), so
        // levels compare with other codes at the 1e-9 Ry level.
        let _ = write!(s, "{x},{},{},{}", k[0], k[1], k[2]);
        for v in e {
            let _ = write!(s, ",{v}");
        }
        s.push('\n');
    }
    let p = dir.join("bands.csv");
    std::fs::write(&p, s).map_err(|e| Fail(format!("cannot write {}: {e}", p.display())))?;
    Ok(p)
}

pub(crate) fn write_svg(run: &Run, dir: &std::path::Path) -> Res<PathBuf> {
    use plotters::prelude::*;
    let p = dir.join("bands.svg");
    let err = |e: &dyn std::fmt::Display| Fail(format!("cannot draw {}: {e}", p.display()));
    let root = SVGBackend::new(&p, (900, 600)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| err(&e))?;
    let xmax = run.samples.last().map_or(1.0, |s| s.0);
    let all = run.samples.iter().flat_map(|s| s.2.iter().copied());
    let (lo, hi) = all.fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(v), b.max(v)));
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("{}: Cohen–Bergstresser band structure", run.material),
            ("sans-serif", 22),
        )
        .margin(15)
        .x_label_area_size(35)
        .y_label_area_size(55)
        .build_cartesian_2d(0.0..xmax, (lo - 0.5)..(hi + 0.5))
        .map_err(|e| err(&e))?;
    let ticks = run.ticks.clone();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_desc("E − E_VBM (eV)")
        .draw()
        .map_err(|e| err(&e))?;
    for (x, name) in &ticks {
        chart
            .draw_series(LineSeries::new(
                [(*x, lo - 0.5), (*x, hi + 0.5)],
                BLACK.mix(0.3),
            ))
            .map_err(|e| err(&e))?;
        chart
            .draw_series(std::iter::once(Text::new(
                greek(name),
                (*x, lo - 0.45),
                ("sans-serif", 16),
            )))
            .map_err(|e| err(&e))?;
    }
    let nb = run.samples.first().map_or(0, |s| s.2.len());
    for b in 0..nb {
        let color = if b < 4 { BLUE } else { RED };
        chart
            .draw_series(LineSeries::new(
                run.samples.iter().map(|s| (s.0, s.2[b])),
                color.stroke_width(2),
            ))
            .map_err(|e| err(&e))?;
    }
    // The gap: the conduction minimum and the valence maximum, joined.
    let vx = run
        .samples
        .iter()
        .find(|s| s.1 == run.gap.vbm_k)
        .map_or(0.0, |s| s.0);
    let cx = run
        .samples
        .iter()
        .min_by(|a, b| a.2[4].partial_cmp(&b.2[4]).unwrap())
        .map_or(0.0, |s| s.0);
    chart
        .draw_series(LineSeries::new(
            [(vx, 0.0), (cx, run.gap.value)],
            GREEN.stroke_width(2),
        ))
        .map_err(|e| err(&e))?
        .label(format!("gap {:.2} eV", run.gap.value))
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], GREEN));
    chart
        .configure_series_labels()
        .background_style(WHITE)
        .border_style(BLACK)
        .draw()
        .map_err(|e| err(&e))?;
    root.present().map_err(|e| err(&e))?;
    drop(root);
    Ok(dir.join("bands.svg"))
}
