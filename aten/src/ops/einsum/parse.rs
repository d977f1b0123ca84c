//! The einsum equation: `"ij,jk->ik"`, `"...ij,...jk"`, `"ii->i"`. Letters `a-z A-Z`
//! are labels, `...` stands for leading (batch) axes, spaces are ignored; without `->`
//! the output is the labels that occur once, sorted, after the ellipsis (NumPy's rule).

use ctensor_base::{Error, Result};

/// One term of the equation: labels, possibly with one ellipsis.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Term {
    /// Letters in order; `None` marks where the ellipsis stands.
    pub items: Vec<Option<u8>>,
}

impl Term {
    pub fn has_ellipsis(&self) -> bool {
        self.items.contains(&None)
    }
    pub fn letters(&self) -> impl Iterator<Item = u8> + '_ {
        self.items.iter().flatten().copied()
    }
}

/// A parsed equation.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Equation {
    pub inputs: Vec<Term>,
    pub output: Term,
}

fn err(eq: &str, position: usize, expected: &str) -> Error {
    Error::EinsumParse {
        equation: eq.to_string(),
        position,
        expected: expected.to_string(),
    }
}

/// Parses one term starting at byte `start` of `eq`.
fn term(eq: &str, text: &str, start: usize) -> Result<Term> {
    let bytes = text.as_bytes();
    let mut items = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'a'..=b'z' | b'A'..=b'Z' => items.push(Some(c)),
            b' ' => {}
            b'.' => {
                if bytes.get(i..i + 3) != Some(b"...") {
                    return Err(err(eq, start + i, "'...' (three dots) for the batch axes"));
                }
                if items.contains(&None) {
                    return Err(err(eq, start + i, "at most one '...' per operand"));
                }
                items.push(None);
                i += 2;
            }
            _ => return Err(err(eq, start + i, "a label (a-z, A-Z), '...', ',' or '->'")),
        }
        i += 1;
    }
    Ok(Term { items })
}

/// Parses `eq` for `n_operands` operands.
pub(crate) fn parse(eq: &str, n_operands: usize) -> Result<Equation> {
    let (lhs, rhs) = match eq.find("->") {
        Some(p) => (&eq[..p], Some((p + 2, &eq[p + 2..]))),
        None => (eq, None),
    };
    if let Some((p, r)) = rhs {
        if let Some(q) = r.find("->") {
            return Err(err(eq, p + q, "a single '->'"));
        }
        if let Some(q) = r.find(',') {
            return Err(err(eq, p + q, "one output term (no ',' after '->')"));
        }
    }
    let mut inputs = Vec::new();
    let mut start = 0;
    for part in lhs.split(',') {
        inputs.push(term(eq, part, start)?);
        start += part.len() + 1;
    }
    if inputs.len() != n_operands {
        return Err(err(
            eq,
            lhs.len(),
            &format!(
                "{n_operands} operand term(s) for {n_operands} tensor(s), found {}",
                inputs.len()
            ),
        ));
    }
    let output = match rhs {
        Some((p, r)) => {
            let out = term(eq, r, p)?;
            let any_ellipsis = inputs.iter().any(Term::has_ellipsis);
            if out.has_ellipsis() && !any_ellipsis {
                let q = r.find("...").unwrap_or(0);
                return Err(err(
                    eq,
                    p + q,
                    "'...' in the output only when an operand has one",
                ));
            }
            for (k, c) in r.bytes().enumerate() {
                if c.is_ascii_alphabetic() && !inputs.iter().any(|t| t.letters().any(|l| l == c)) {
                    return Err(err(
                        eq,
                        p + k,
                        &format!(
                            "output labels that occur in an operand ('{}' does not)",
                            c as char
                        ),
                    ));
                }
            }
            out
        }
        None => {
            let mut count = [0usize; 256];
            for t in &inputs {
                for l in t.letters() {
                    count[l as usize] += 1;
                }
            }
            let mut items: Vec<Option<u8>> = Vec::new();
            if inputs.iter().any(Term::has_ellipsis) {
                items.push(None);
            }
            let mut letters: Vec<u8> = (0..=255u8).filter(|&c| count[c as usize] == 1).collect();
            letters.sort_unstable();
            items.extend(letters.into_iter().map(Some));
            Term { items }
        }
    };
    Ok(Equation { inputs, output })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_explicit_implicit_and_ellipsis_forms() {
        let e = parse("ij,jk->ik", 2).unwrap();
        assert_eq!(e.output.items, vec![Some(b'i'), Some(b'k')]);
        let e = parse("ij,jk", 2).unwrap();
        assert_eq!(e.output.items, vec![Some(b'i'), Some(b'k')]);
        let e = parse("...ij, ...jk -> ...ik", 2).unwrap();
        assert_eq!(e.inputs[0].items, vec![None, Some(b'i'), Some(b'j')]);
        assert_eq!(parse("ii", 1).unwrap().output.items, vec![]);
    }

    #[test]
    fn errors_name_the_position() {
        let cases = [
            ("ij,j1->i", 2, 4),
            ("ij,jk->iz", 2, 8),
            ("ij..,jk->ik", 2, 2),
            ("ij,jk->i->k", 2, 8),
            ("ij->ij", 2, 2),
        ];
        for (eq, n, pos) in cases {
            match parse(eq, n).unwrap_err() {
                Error::EinsumParse { position, .. } => assert_eq!(position, pos, "{eq}"),
                e => panic!("{eq}: {e}"),
            }
        }
    }
}
