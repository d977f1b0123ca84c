! A Fortran 2008 client of ctensor through its module (include/ctensor.f90, generated
! from the C header): it maps a column-major complex(8) array without copying
! (call ct_map), diagonalises it with ct_eigh and checks A v = λ v, calls the raw
! ct_zheevd kernel on its own array, contracts with ct_einsum, saves a .npy file, and
! reads an error message. Exits non-zero on a mismatch. Built and run by `make test`
! (tests/c/run.sh, which passes the output directory) with -std=f2008 -Wall -Werror.
program client
  use ctensor
  implicit none
  integer, parameter :: n = 3
  complex(c_double_complex), target :: a(n, n), b(n, n)
  real(c_double), target :: x(n)
  real(c_double), pointer :: w(:), y(:)
  complex(c_double_complex), pointer :: v(:, :)
  real(c_double) :: wk(n), err
  type(c_ptr), target :: ops(2)
  type(c_ptr) :: ta, tw, tv, pw, pv, tx, ty, py, bad
  type(ct_einsum_options), target :: opts
  integer(c_int) :: status
  integer :: i, failures
  character(len=4096) :: dir

  failures = 0
  ! A Hermitian matrix, column-major as Fortran stores it.
  a = reshape([(2.0d0, 0.0d0), (1.0d0, 1.0d0), (0.0d0, 0.0d0), &
               (1.0d0, -1.0d0), (3.0d0, 0.0d0), (0.0d0, 2.0d0), &
               (0.0d0, 0.0d0), (0.0d0, -2.0d0), (4.0d0, 0.0d0)], [n, n])
  call ct_map(a, ta)
  if (ct_eigh(ta, c_null_ptr, 0, tw, tv) /= CT_OK) stop 3
  if (ct_tensor_data(tw, pw) /= CT_OK) stop 4
  if (ct_tensor_data(tv, pv) /= CT_OK) stop 5
  call c_f_pointer(pw, w, [n])
  call c_f_pointer(pv, v, [n, n]) ! the vectors come back column-major, like the input
  do i = 1, n
    err = maxval(abs(matmul(a, v(:, i)) - w(i) * v(:, i)))
    if (err > 1d-12) then
      print *, 'client.f90: A v /= lambda v for eigenpair', i, err
      failures = failures + 1
    end if
  end do
  ! The raw kernel on the caller's own array.
  b = a
  if (ct_zheevd('V', 'L', int(n, c_size_t), b, int(n, c_size_t), wk) /= CT_OK) stop 6
  if (maxval(abs(wk - w)) > 1d-12) then
    print *, 'client.f90: ct_zheevd and ct_eigh disagree', wk, w
    failures = failures + 1
  end if
  ! einsum over a mapped real(8) vector: y = x * 2 (alpha = 2).
  x = [1.0d0, -2.0d0, 0.5d0]
  call ct_map(x, tx, status)
  if (status /= CT_OK) stop 8
  opts = ct_einsum_default_options()
  opts%alpha_re = 2.0d0
  ops(1) = tx
  if (ct_einsum('i->i'//c_null_char, 1_c_size_t, ops, c_loc(opts), ty) /= CT_OK) stop 9
  if (ct_tensor_data(ty, py) /= CT_OK) stop 10
  call c_f_pointer(py, y, [n])
  if (maxval(abs(y - 2 * x)) > 0) then
    print *, 'client.f90: einsum with alpha', y
    failures = failures + 1
  end if
  ! A .npy file NumPy reads as a Fortran-ordered complex128 array, in the directory
  ! given as the first argument.
  call get_command_argument(1, dir)
  if (ct_tensor_save_npy(ta, trim(dir)//'/client_f90.npy'//c_null_char) /= CT_OK) stop 11
  ! Errors: a status and the message, never a crash.
  if (ct_tensor_load_npy('/nonexistent/x.npy'//c_null_char, CT_CPU, bad) /= CT_ERR_IO) stop 12
  if (index(ct_error_message(), '/nonexistent/x.npy') == 0) then
    print *, 'client.f90: message ', ct_error_message()
    failures = failures + 1
  end if
  if (ct_tensor_free(ta) /= CT_OK .or. ct_tensor_free(tw) /= CT_OK .or. ct_tensor_free(tv) /= CT_OK) stop 7
  if (ct_tensor_free(tx) /= CT_OK .or. ct_tensor_free(ty) /= CT_OK) stop 13
  if (failures > 0) stop 1
  print '(a)', 'client.f90: all checks passed'
end program
