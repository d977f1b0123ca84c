//! Goedecker–Teter–Hutter / Hartwigsen–Goedecker–Hutter pseudopotentials: the two file
//! formats (ABINIT's `pspcod 3`, CP2K's GTH) and the analytic Fourier transforms a
//! plane-wave code needs (Goedecker, Teter & Hutter, PRB 54, 1703 (1996); Hartwigsen,
//! Goedecker & Hutter, PRB 58, 3641 (1998)).

use crate::error::{PwError, Result};
use std::f64::consts::PI;
use std::path::{Path, PathBuf};

/// One angular-momentum channel of the separable nonlocal part.
#[derive(Clone, Debug, PartialEq)]
pub struct Channel {
    /// Angular momentum l.
    pub l: usize,
    /// Projector radius r_l (bohr).
    pub r: f64,
    /// The full symmetric coupling matrix h^l (Ha), `n × n` for `n` projectors.
    pub h: Vec<Vec<f64>>,
}

/// An HGH/GTH pseudopotential.
#[derive(Clone, Debug, PartialEq)]
pub struct Hgh {
    /// Valence charge Z_ion.
    pub zion: f64,
    /// Local radius r_loc (bohr).
    pub rloc: f64,
    /// C1..C4 of the local part (Ha).
    pub c: [f64; 4],
    /// The nonlocal channels with at least one projector.
    pub channels: Vec<Channel>,
}

/// The largest angular momentum and projector count per l whose transforms are
/// implemented (`P_i^l`): s and p up to 3 projectors, d up to 2, f 1.
const MAX_PROJECTORS: [usize; 4] = [3, 3, 2, 1];

fn err(path: &Path, line: usize, message: impl Into<String>) -> PwError {
    PwError::Pseudo {
        path: path.to_path_buf(),
        line,
        message: message.into(),
    }
}

/// Numbers of a line, or an error naming the line and what was expected.
fn numbers(path: &Path, lines: &[&str], i: usize, want: usize, what: &str) -> Result<Vec<f64>> {
    let line = lines.get(i).ok_or_else(|| {
        err(
            path,
            i + 1,
            format!("expected {what}, found the end of the file"),
        )
    })?;
    let mut out = Vec::new();
    for tok in line.split_whitespace() {
        match tok.replace(['d', 'D'], "e").parse::<f64>() {
            Ok(x) if x.is_finite() => out.push(x),
            Ok(_) => {
                return Err(err(
                    path,
                    i + 1,
                    format!("expected {what}, found a non-finite number '{tok}'"),
                ))
            }
            Err(_) => break,
        }
        if out.len() == want {
            break;
        }
    }
    if out.len() < want {
        return Err(err(
            path,
            i + 1,
            format!("expected {what} ({want} numbers), found '{}'", line.trim()),
        ));
    }
    Ok(out)
}

impl Hgh {
    /// Reads a pseudopotential file: ABINIT's HGH format (`pspcod 3` on line 3) or
    /// CP2K's GTH format, told apart by their third line.
    pub fn from_file(path: &Path) -> Result<Hgh> {
        let text = std::fs::read_to_string(path).map_err(|e| PwError::Io {
            path: path.to_path_buf(),
            source: e,
        })?;
        let lines: Vec<&str> = text.lines().collect();
        let looks_abinit = lines
            .get(2)
            .and_then(|l| l.split_whitespace().next())
            .is_some_and(|t| t.parse::<i64>().is_ok() && l_has_six_ints(lines[2]));
        if looks_abinit {
            Hgh::parse_abinit(path, &text)
        } else {
            Hgh::parse_gth(path, &text)
        }
    }

    /// Parses ABINIT's HGH format (`pspcod 3`): title; `zatom zion pspdat`; `pspcod pspxc
    /// lmax lloc mmax r2well`; `rloc C1..C4`; `r_s h11 h22 h33`; then per l = 1..=lmax
    /// `r_l h11 h22 h33` and a spin–orbit line `k11 k22 k33` (ignored). The off-diagonal
    /// h_ij follow from the diagonal as in HGH 1998 (and ABINIT's psp3nl).
    pub fn parse_abinit(path: &Path, text: &str) -> Result<Hgh> {
        let lines: Vec<&str> = text.lines().collect();
        let z = numbers(path, &lines, 1, 2, "zatom zion")?;
        let head = numbers(path, &lines, 2, 3, "pspcod pspxc lmax")?;
        if head[0] != 3.0 {
            return Err(err(
                path,
                3,
                format!("expected pspcod 3 (HGH), found pspcod {}", head[0]),
            ));
        }
        let lmax = head[2];
        if !(0.0..=3.0).contains(&lmax) || lmax.fract() != 0.0 {
            return Err(err(
                path,
                3,
                format!("expected lmax in 0..=3, found {lmax}"),
            ));
        }
        let loc = numbers(path, &lines, 3, 5, "rloc C1 C2 C3 C4")?;
        let mut channels = Vec::new();
        let mut row = 4;
        for (l, &max_n) in MAX_PROJECTORS.iter().enumerate().take(lmax as usize + 1) {
            let v = numbers(path, &lines, row, 4, &format!("r_l h11 h22 h33 of l = {l}"))?;
            row += if l == 0 { 1 } else { 2 };
            let diag: Vec<f64> = v[1..4].to_vec();
            let n = diag.iter().rposition(|&h| h != 0.0).map_or(0, |i| i + 1);
            if n == 0 {
                continue;
            }
            if v[0] <= 0.0 {
                return Err(err(
                    path,
                    row,
                    format!("expected a radius r_{l} > 0, found {}", v[0]),
                ));
            }
            if n > max_n {
                return Err(err(
                    path,
                    row,
                    format!(
                        "{n} projectors for l = {l}: at most {} are supported",
                        max_n
                    ),
                ));
            }
            channels.push(Channel {
                l,
                r: v[0],
                h: complete_h(l, &diag[..n]),
            });
        }
        Hgh::checked(path, z[1], loc, channels)
    }

    /// Parses CP2K's GTH format: a name line; the electron counts per l (their sum is
    /// Z_ion); `r_loc n_C C1..Cn`; the number of nonlocal channels; per channel
    /// `r_l n_l h_11 .. h_1n` followed by the rest of the upper triangle row by row.
    /// Comment lines (`#`) and blank lines are skipped; the first entry is read.
    pub fn parse_gth(path: &Path, text: &str) -> Result<Hgh> {
        let numbered: Vec<(usize, &str)> = text
            .lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
            .collect();
        let lines: Vec<&str> = numbered.iter().map(|x| x.1).collect();
        let at = |i: usize| numbered.get(i).map_or(0, |x| x.0 + 1);
        let renumber = |e: PwError, i: usize| match e {
            PwError::Pseudo { path, message, .. } => PwError::Pseudo {
                path,
                line: at(i),
                message,
            },
            other => other,
        };
        if lines.is_empty() {
            return Err(err(
                path,
                0,
                "expected a GTH pseudopotential, found an empty file",
            ));
        }
        let counts: Vec<f64> = lines
            .get(1)
            .map(|l| {
                l.split_whitespace()
                    .filter_map(|t| t.parse::<f64>().ok())
                    .collect()
            })
            .unwrap_or_default();
        if counts.is_empty() || counts.iter().any(|&c| c < 0.0 || c.fract() != 0.0) {
            return Err(err(
                path,
                at(1),
                "expected the electron counts per l (e.g. '2 2')",
            ));
        }
        let zion: f64 = counts.iter().sum();
        let first = numbers(path, &lines, 2, 2, "r_loc and the number of C_i")
            .map_err(|e| renumber(e, 2))?;
        let nc = first[1] as usize;
        if first[1].fract() != 0.0 || nc > 4 {
            return Err(err(
                path,
                at(2),
                format!("expected 0..=4 coefficients C_i, found {}", first[1]),
            ));
        }
        let all = numbers(path, &lines, 2, 2 + nc, "r_loc n C1..Cn").map_err(|e| renumber(e, 2))?;
        let mut loc = vec![all[0], 0.0, 0.0, 0.0, 0.0];
        loc[1..1 + nc].copy_from_slice(&all[2..2 + nc]);
        let mut channels = Vec::new();
        let mut row = 3;
        let nchan = if row < lines.len() {
            numbers(path, &lines, row, 1, "the number of nonlocal channels")
                .map_err(|e| renumber(e, row))?[0]
        } else {
            0.0
        };
        if nchan.fract() != 0.0 || !(0.0..=4.0).contains(&nchan) {
            return Err(err(
                path,
                at(row),
                format!("expected 0..=4 nonlocal channels, found {nchan}"),
            ));
        }
        row += 1;
        for (l, &max_n) in MAX_PROJECTORS.iter().enumerate().take(nchan as usize) {
            let head = numbers(
                path,
                &lines,
                row,
                2,
                &format!("r_{l} and its projector count"),
            )
            .map_err(|e| renumber(e, row))?;
            let n = head[1] as usize;
            if head[1].fract() != 0.0 || n > max_n {
                return Err(err(
                    path,
                    at(row),
                    format!(
                        "{} projectors for l = {l}: at most {} are supported",
                        head[1], max_n
                    ),
                ));
            }
            let mut h = vec![vec![0.0; n]; n];
            for i in 0..n {
                let skip = if i == 0 { 2 } else { 0 };
                let v = numbers(
                    path,
                    &lines,
                    row,
                    skip + n - i,
                    &format!("row {} of h for l = {l}", i + 1),
                )
                .map_err(|e| renumber(e, row))?;
                for j in i..n {
                    h[i][j] = v[skip + j - i];
                    h[j][i] = v[skip + j - i];
                }
                row += 1;
            }
            // CP2K lists spin–orbit k_ij after each l ≥ 1 only in SOC files; none here.
            if n > 0 {
                if head[0] <= 0.0 {
                    return Err(err(
                        path,
                        at(row - 1),
                        format!("expected a radius r_{l} > 0, found {}", head[0]),
                    ));
                }
                channels.push(Channel { l, r: head[0], h });
            }
        }
        Hgh::checked(path, zion, loc, channels)
    }

    fn checked(path: &Path, zion: f64, loc: Vec<f64>, channels: Vec<Channel>) -> Result<Hgh> {
        if zion.is_nan() || zion <= 0.0 {
            return Err(err(
                path,
                0,
                format!("expected a valence charge > 0, found {zion}"),
            ));
        }
        if loc[0].is_nan() || loc[0] <= 0.0 {
            return Err(err(
                path,
                0,
                format!("expected r_loc > 0, found {}", loc[0]),
            ));
        }
        Ok(Hgh {
            zion,
            rloc: loc[0],
            c: [loc[1], loc[2], loc[3], loc[4]],
            channels,
        })
    }

    /// The Fourier transform of the local part, `v(q) = ∫ v_loc(r) e^{−iq·r} d³r`
    /// (Ha·bohr³), for q > 0 (GTH 1996).
    pub fn local_form_factor(&self, q: f64) -> f64 {
        let x = (q * self.rloc).powi(2);
        let e = (-x / 2.0).exp();
        let [c1, c2, c3, c4] = self.c;
        -4.0 * PI * self.zion / (q * q) * e
            + (2.0 * PI).powf(1.5)
                * self.rloc.powi(3)
                * e
                * (c1
                    + c2 * (3.0 - x)
                    + c3 * (15.0 - 10.0 * x + x * x)
                    + c4 * (105.0 - 105.0 * x + 21.0 * x * x - x * x * x))
    }

    /// `dv/dq` of [`local_form_factor`](Self::local_form_factor) (Ha·bohr⁴), q > 0: with
    /// `x = (q r_loc)²` and `v = −4πZ e^{−x/2}/q² + (2π)^{3/2} r_loc³ e^{−x/2} P(x)`,
    /// `dv/dq = 4πZ e^{−x/2} (r_loc²/q + 2/q³) + (2π)^{3/2} r_loc³ e^{−x/2} (P′ − P/2) 2q r_loc²`.
    pub fn local_form_factor_derivative(&self, q: f64) -> f64 {
        let r2 = self.rloc * self.rloc;
        let x = q * q * r2;
        let e = (-x / 2.0).exp();
        let [c1, c2, c3, c4] = self.c;
        let p = c1
            + c2 * (3.0 - x)
            + c3 * (15.0 - 10.0 * x + x * x)
            + c4 * (105.0 - 105.0 * x + 21.0 * x * x - x * x * x);
        let dp = -c2 + c3 * (-10.0 + 2.0 * x) + c4 * (-105.0 + 42.0 * x - 3.0 * x * x);
        4.0 * PI * self.zion * e * (r2 / q + 2.0 / (q * q * q))
            + (2.0 * PI).powf(1.5) * self.rloc.powi(3) * e * (dp - p / 2.0) * 2.0 * q * r2
    }

    /// `α = lim_{q→0} [v(q) + 4πZ/q²]` (Ha·bohr³, ABINIT's `epsatm`): the finite part of
    /// the local potential's average, which enters only the energy.
    pub fn alpha(&self) -> f64 {
        let [c1, c2, c3, c4] = self.c;
        2.0 * PI * self.zion * self.rloc.powi(2)
            + (2.0 * PI).powf(1.5) * self.rloc.powi(3) * (c1 + 3.0 * c2 + 15.0 * c3 + 105.0 * c4)
    }

    /// `P_i^l(q) = 4π ∫ p_i^l(r) j_l(qr) r² dr` of projector `i` (0-based) of `channel`.
    pub fn projector(&self, channel: &Channel, i: usize, q: f64) -> f64 {
        projector_form_factor(channel.l, i, channel.r, q)
    }

    /// Number of projector functions per atom (Σ_l (2l+1) n_l).
    pub fn projector_count(&self) -> usize {
        self.channels
            .iter()
            .map(|c| (2 * c.l + 1) * c.h.len())
            .sum()
    }
}

fn l_has_six_ints(line: &str) -> bool {
    line.split_whitespace()
        .take(6)
        .filter(|t| t.parse::<f64>().is_ok())
        .count()
        == 6
}

/// The full h^l from its diagonal (HGH 1998, eq. (18)–(20); ABINIT's psp3nl).
fn complete_h(l: usize, d: &[f64]) -> Vec<Vec<f64>> {
    let n = d.len();
    let mut h = vec![vec![0.0; n]; n];
    for i in 0..n {
        h[i][i] = d[i];
    }
    let h33 = d.get(2).copied().unwrap_or(0.0);
    let h22 = d.get(1).copied().unwrap_or(0.0);
    let (h12, h13, h23) = match l {
        0 => (
            -0.5 * (3.0f64 / 5.0).sqrt() * h22,
            0.5 * (5.0f64 / 21.0).sqrt() * h33,
            -0.5 * (100.0f64 / 63.0).sqrt() * h33,
        ),
        1 => (
            -0.5 * (5.0f64 / 7.0).sqrt() * h22,
            (35.0f64 / 11.0).sqrt() / 6.0 * h33,
            -14.0 / 11f64.sqrt() / 6.0 * h33,
        ),
        2 => (-0.5 * (7.0f64 / 9.0).sqrt() * h22, 0.0, 0.0),
        _ => (0.0, 0.0, 0.0),
    };
    let mut set = |i: usize, j: usize, v: f64| {
        if i < n && j < n {
            h[i][j] = v;
            h[j][i] = v;
        }
    };
    set(0, 1, h12);
    set(0, 2, h13);
    set(1, 2, h23);
    h
}

/// `P_i^l(q)` (HGH 1998's p_i^l(q) times √Ω), the transforms the reference lists.
pub fn projector_form_factor(l: usize, i: usize, r: f64, q: f64) -> f64 {
    let x = (q * r).powi(2);
    let e = (-x / 2.0).exp();
    let p54 = PI.powf(1.25);
    match (l, i) {
        (0, 0) => 4.0 * 2f64.sqrt() * p54 * r.powf(1.5) * e,
        (0, 1) => 8.0 * (2.0f64 / 15.0).sqrt() * p54 * r.powf(1.5) * (3.0 - x) * e,
        (0, 2) => {
            16.0 / 3.0 * (2.0f64 / 105.0).sqrt() * p54 * r.powf(1.5) * (15.0 - 10.0 * x + x * x) * e
        }
        (1, 0) => 8.0 / 3f64.sqrt() * p54 * r.powf(2.5) * q * e,
        (1, 1) => 16.0 / 105f64.sqrt() * p54 * r.powf(2.5) * q * (5.0 - x) * e,
        (1, 2) => {
            32.0 / 3.0 / 1155f64.sqrt() * p54 * r.powf(2.5) * q * (35.0 - 14.0 * x + x * x) * e
        }
        (2, 0) => 8.0 * (2.0f64 / 15.0).sqrt() * p54 * r.powf(3.5) * q * q * e,
        (2, 1) => 16.0 / 3.0 * (2.0f64 / 105.0).sqrt() * p54 * r.powf(3.5) * q * q * (7.0 - x) * e,
        (3, 0) => 16.0 / 105f64.sqrt() * p54 * r.powf(4.5) * q.powi(3) * e,
        _ => 0.0,
    }
}

/// The pseudopotential files of a calculation, by species.
pub fn load_all(paths: &[(String, PathBuf)]) -> Result<Vec<Hgh>> {
    paths.iter().map(|(_, p)| Hgh::from_file(p)).collect()
}

#[cfg(test)]
mod tests;
