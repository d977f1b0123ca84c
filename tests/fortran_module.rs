//! `include/ctensor.f90` — the Fortran module `ctensor` — is generated from
//! `include/ctensor.h` (itself checked against the code by tests/header.rs): one
//! `iso_c_binding` interface per `ct_*` function, the status and enum constants, the
//! option structs as `bind(c)` types, and generic `ct_map` wrappers. This test fails when
//! the committed module differs from what the header gives, and when the header uses a C
//! type the generator does not know; `make header` (`CTENSOR_WRITE_HEADER=1`) rewrites it.
#![deny(unused_must_use)]

use std::fmt::Write as _;

/// What a helper that can fail returns.
type Fallible<T> = std::result::Result<T, Box<dyn std::error::Error>>;

/// What a test returns: a failing step names its error.
type TestResult = std::result::Result<(), Box<dyn std::error::Error>>;

/// The C header without comments, one declaration per item.
fn declarations(header: &str) -> Vec<String> {
    let mut text = String::new();
    for line in header.lines() {
        let line = line.split("//").next().unwrap_or("");
        // Preprocessor lines and C++'s `extern "C" {` wrapper.
        if line.trim_start().starts_with('#') || line.trim_start().starts_with("extern \"C\"") {
            continue;
        }
        text.push_str(line);
        text.push(' ');
    }
    // Drop /* ... */ comments.
    while let Some(a) = text.find("/*") {
        let b = text[a..].find("*/").map_or(text.len(), |b| a + b + 2);
        text.replace_range(a..b, " ");
    }
    text.split(';')
        .map(|d| d.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|d| !d.is_empty())
        .collect()
}

/// `typedef enum ct_x { A = 0, B = 1, } ct_x` → the constants.
fn enum_constants(decls: &[String]) -> Fallible<Fallible<Vec<(String, String)>>> {
    Ok({
        Ok({
            let mut out = Vec::new();
            for d in decls {
                let Some(rest) = d.strip_prefix("typedef enum ct_") else {
                    continue;
                };
                let body = &rest[rest.find('{').unwrap() + 1..rest.rfind('}').unwrap()];
                for item in body.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                    let (name, value) = item.split_once('=').expect("enum values are explicit");
                    out.push((name.trim().to_string(), value.trim().to_string()));
                }
            }
            out
        })
    })
}

/// The Fortran type of a C struct field.
fn field_type(c: &str) -> &'static str {
    match c {
        "int32_t" => "integer(c_int32_t)",
        "size_t" => "integer(c_size_t)",
        "double" => "real(c_double)",
        // Fortran has no unsigned integers: the counters read as signed 64-bit.
        "uint64_t" => "integer(c_int64_t)",
        other => panic!("fortran_module: no Fortran type for the struct field type `{other}`"),
    }
}

/// `typedef struct ct_x { T a; U b; } ct_x` (those with fields, but ct_c64, which
/// Fortran's `complex(c_double_complex)` is) → Fortran `bind(c)` types.
fn struct_types(decls: &[String]) -> Fallible<Fallible<String>> {
    Ok({
        Ok({
            let mut out = String::new();
            let mut i = 0;
            while i < decls.len() {
                let d = &decls[i];
                i += 1;
                let Some(rest) = d.strip_prefix("typedef struct ct_") else {
                    continue;
                };
                let Some((name, first)) = rest.split_once(" { ") else {
                    continue; // an opaque type
                };
                if name == "c64" {
                    // Fields run to the closing brace; skip them.
                    while !decls[i - 1].contains('}') {
                        i += 1;
                    }
                    continue;
                }
                writeln!(out, "  type, bind(c) :: ct_{name}")?;
                let mut field = first.to_string();
                loop {
                    let (ty, var) = field.rsplit_once(' ').unwrap();
                    writeln!(out, "    {} :: {var}", field_type(ty))?;
                    field = decls[i].clone();
                    i += 1;
                    if field.starts_with('}') {
                        break;
                    }
                }
                writeln!(out, "  end type ct_{name}")?;
            }
            out
        })
    })
}

/// Out-parameters that receive arrays rather than one value.
const ARRAY_OUTS: [(&str, &str); 2] = [("ct_tensor_shape", "out"), ("ct_tensor_strides", "out")];

/// The Fortran declaration of parameter `name` of C type `c` in function `func`, and the
/// iso_c_binding names it needs.
fn param(func: &str, c: &str, name: &str) -> String {
    let array = |t: &str, intent: &str| format!("{t}, intent({intent}) :: {name}(*)");
    match c {
        "int32_t" => format!("integer(c_int32_t), value :: {name}"),
        "size_t" => format!("integer(c_size_t), value :: {name}"),
        "double" => format!("real(c_double), value :: {name}"),
        "char" => format!("character(kind=c_char), value :: {name}"),
        "int32_t *" => format!("integer(c_int32_t), intent(out) :: {name}"),
        "uint64_t *" => format!("integer(c_int64_t), intent(out) :: {name}"),
        "struct ct_memory_stats *" => format!("type(ct_memory_stats), intent(out) :: {name}"),
        "size_t *" if ARRAY_OUTS.contains(&(func, name)) => array("integer(c_size_t)", "out"),
        "size_t *" => format!("integer(c_size_t), intent(out) :: {name}"),
        "const size_t *" => array("integer(c_size_t)", "in"),
        "const int64_t *" => array("integer(c_int64_t)", "in"),
        "const double *" => array("real(c_double)", "in"),
        "double *" => array("real(c_double)", "inout"),
        "const struct ct_c64 *" if matches!(name, "alpha" | "beta") => {
            format!("complex(c_double_complex), intent(in) :: {name}")
        }
        "const struct ct_c64 *" => array("complex(c_double_complex)", "in"),
        "struct ct_c64 *" => array("complex(c_double_complex)", "inout"),
        "const char *" => array("character(kind=c_char)", "in"),
        "const void *"
        | "void *"
        | "const struct ct_tensor *"
        | "struct ct_tensor *"
        | "struct ct_mirrored *"
        | "const struct ct_stream *"
        | "struct ct_stream *"
        | "const struct ct_einsum_options *"
        | "const struct ct_eig_range *"
        | "DLManagedTensorVersioned *"
        | "DLManagedTensor *" => format!("type(c_ptr), value :: {name}"),
        "void **"
        | "struct ct_tensor **"
        | "struct ct_mirrored **"
        | "struct ct_stream **"
        | "DLManagedTensorVersioned **" => {
            format!("type(c_ptr), intent(out) :: {name}")
        }
        "const struct ct_tensor *const *" => array("type(c_ptr)", "in"),
        other => panic!(
            "fortran_module: no Fortran mapping for `{other} {name}` in {func}: \
             add one to tests/fortran_module.rs"
        ),
    }
}

/// Splits `const struct ct_tensor *t` into its type (`const struct ct_tensor *`) and
/// its name (`t`): the name is the trailing identifier.
fn split_ident(p: &str) -> (String, String) {
    let p = p.trim();
    let at = p
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(0, |i| i + 1);
    (p[..at].trim().to_string(), p[at..].to_string())
}

fn interfaces(decls: &[String]) -> Fallible<Fallible<String>> {
    Ok({
        Ok({
            let mut out = String::new();
            for d in decls {
                let Some(open) = d.find('(') else { continue };
                if d.starts_with("typedef") {
                    continue;
                }
                let (ret, name) = split_ident(&d[..open]);
                if !name.starts_with("ct_") {
                    continue;
                }
                let ret = ret.as_str();
                let result = match ret {
                    "enum ct_status" => "integer(c_int)",
                    "const char *" => "type(c_ptr)",
                    "struct ct_einsum_options" => "type(ct_einsum_options)",
                    other => {
                        panic!("fortran_module: no Fortran result type for `{other}` ({name})")
                    }
                };
                let args = &d[open + 1..d.rfind(')').unwrap()];
                let params: Vec<(String, String)> = if args.trim() == "void" {
                    Vec::new()
                } else {
                    args.split(',').map(split_ident).collect()
                };
                let names: Vec<&str> = params.iter().map(|(_, n)| n.as_str()).collect();
                writeln!(
                    out,
                    "    function {name}({}) bind(c, name=\"{name}\")",
                    names.join(", ")
                )?;
                writeln!(out, "      import")?;
                writeln!(out, "      {result} :: {name}")?;
                for (ty, n) in &params {
                    writeln!(out, "      {}", param(&name, ty, n))?;
                }
                writeln!(out, "    end function {name}")?;
            }
            out
        })
    })
}

/// The generic `ct_map` for real(8) and complex(8) arrays of rank 1 to 3.
fn map_wrappers() -> Fallible<(String, String)> {
    Ok({
        let mut names = Vec::new();
        let mut body = String::new();
        for (kind, ty, code) in [
            ("r8", "real(c_double)", "CT_F64"),
            ("c8", "complex(c_double_complex)", "CT_C64"),
        ] {
            for rank in 1..=3 {
                let dims = vec![":"; rank].join(",");
                let name = format!("ct_map_{kind}_{rank}");
                names.push(name.clone());
                write!(
                body,
                "  ! Maps a column-major {ty} array of rank {rank} as a tensor, without copying.\n\
                 \x20 subroutine {name}(a, t, status)\n\
                 \x20   {ty}, intent(inout), target, contiguous :: a({dims})\n\
                 \x20   type(c_ptr), intent(out) :: t\n\
                 \x20   integer(c_int), intent(out), optional :: status\n\
                 \x20   integer(c_size_t) :: shape({rank})\n\
                 \x20   type(c_ptr) :: p\n\
                 \x20   shape = int(shape_of(a), c_size_t)\n\
                 \x20   p = c_null_ptr\n\
                 \x20   if (size(a) > 0) p = c_loc(a)\n\
                 \x20   call check(ct_tensor_map(p, {code}, CT_CPU, {rank}_c_size_t, shape, CT_COL_MAJOR, t), status)\n\
                 \x20 end subroutine {name}\n\n"
            )
            ?;
            }
        }
        let generic = format!(
            "  ! call ct_map(a, t [, status]): a real(8) or complex(8) array of rank 1-3, mapped\n\
         \x20 ! column-major without a copy; t is the new ct_tensor handle (ct_tensor_free it).\n\
         \x20 interface ct_map\n    module procedure {}\n  end interface ct_map\n",
            names.join(", ")
        );
        (generic, body)
    })
}

const HELPERS: &str = "  ! The calling thread's last error message, as a Fortran string.
  function ct_error_message() result(msg)
    character(len=:), allocatable :: msg
    character(kind=c_char), pointer :: chars(:)
    type(c_ptr) :: p
    integer :: n
    p = ct_last_error_message()
    n = 0
    call c_f_pointer(p, chars, [huge(0)])
    do while (chars(n + 1) /= c_null_char)
      n = n + 1
    end do
    allocate(character(len=n) :: msg)
    msg = transfer(chars(1:n), msg)
  end function ct_error_message

  ! Hands `code` to `status` when present; otherwise stops with the message on failure.
  subroutine check(code, status)
    integer(c_int), intent(in) :: code
    integer(c_int), intent(out), optional :: status
    if (present(status)) then
      status = code
    else if (code /= CT_OK) then
      write (error_unit, '(a)') 'ctensor: ' // ct_error_message()
      error stop 1
    end if
  end subroutine check
";

fn generate(header: &str) -> Fallible<String> {
    Ok({
        let decls = declarations(header);
        let mut f = String::from(
        "! ctensor: the Fortran module over the C ABI. Generated from include/ctensor.h by\n\
         ! tests/fortran_module.rs (make header); do not edit.\n\
         !\n\
         ! Every ct_* function returns a status (CT_OK == 0); ct_error_message() gives the\n\
         ! message. Handles are type(c_ptr). Character arguments are NUL-terminated: pass\n\
         ! 'ij,jk->ik'//c_null_char. Nullable struct pointers (range, opts) are type(c_ptr):\n\
         ! pass c_loc(x) or c_null_ptr. Link with the libraries `make link-flags` prints.\n\
         module ctensor\n  use, intrinsic :: iso_c_binding\n  use, intrinsic :: iso_fortran_env, only: error_unit\n  implicit none\n\n",
    );
        for (name, value) in enum_constants(&decls)?? {
            writeln!(f, "  integer(c_int32_t), parameter :: {name} = {value}")?;
        }
        f.push('\n');
        f.push_str(&struct_types(&decls)??);
        f.push_str("\n  interface\n");
        f.push_str(&interfaces(&decls)??);
        f.push_str("  end interface\n\n");
        let (generic, body) = map_wrappers()?;
        f.push_str(&generic);
        f.push_str(
            "\n  interface shape_of\n    module procedure shape_r8_1, shape_r8_2, shape_r8_3, \
         shape_c8_1, shape_c8_2, shape_c8_3\n  end interface shape_of\n",
        );
        f.push_str("\ncontains\n\n");
        f.push_str(HELPERS);
        f.push('\n');
        f.push_str(&body);
        for (kind, ty) in [
            ("r8", "real(c_double)"),
            ("c8", "complex(c_double_complex)"),
        ] {
            for rank in 1..=3 {
                let dims = vec![":"; rank].join(",");
                writeln!(
                f,
                "  pure function shape_{kind}_{rank}(a) result(s)\n    {ty}, intent(in) :: a({dims})\n    \
                 integer :: s({rank})\n    s = shape(a)\n  end function shape_{kind}_{rank}\n"
            )
            ?;
            }
        }
        f.push_str("end module ctensor\n");
        f
    })
}

#[test]
fn committed_fortran_module_matches_the_header() -> TestResult {
    let dir = env!("CARGO_MANIFEST_DIR");
    let header = std::fs::read_to_string(format!("{dir}/include/ctensor.h"))?;
    let generated = generate(&header)?;
    let path = format!("{dir}/include/ctensor.f90");
    if std::env::var_os("CTENSOR_WRITE_HEADER").is_some() {
        std::fs::write(&path, &generated)?;
        return Ok(());
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "include/ctensor.f90 differs from what include/ctensor.h generates: run `make header`"
    );
    // Every function the header declares has its interface (50 and more).
    let declared: Vec<String> = declarations(&header)
        .iter()
        .filter(|d| !d.starts_with("typedef") && d.contains('('))
        .map(|d| split_ident(&d[..d.find('(').unwrap()]).1)
        .filter(|n| n.starts_with("ct_"))
        .collect();
    assert!(
        declared.len() >= 50,
        "only {} functions found",
        declared.len()
    );
    for name in declared {
        assert!(
            generated.contains(&format!("function {name}(")),
            "no interface for {name}"
        );
    }
    Ok(())
}
