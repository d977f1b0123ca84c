! A Fortran 2008 client of ctensor's ABI through iso_c_binding: it maps a column-major
! complex(8) array without copying, diagonalises it with ct_eigh and checks A v = λ v,
! then calls the raw ct_zheevd kernel on its own array. Exits non-zero on a mismatch.
! Built and run by `make test` (tests/c/run.sh).
module ctensor
  use iso_c_binding
  implicit none
  integer(c_int32_t), parameter :: CT_OK = 0, CT_C64 = 5, CT_CPU = 0, CT_COL_MAJOR = 1
  interface
    integer(c_int) function ct_tensor_map(data, dtype, device, ndim, shape, order, out) bind(c)
      import :: c_ptr, c_int, c_int32_t, c_size_t
      type(c_ptr), value :: data
      integer(c_int32_t), value :: dtype, device, order
      integer(c_size_t), value :: ndim
      integer(c_size_t) :: shape(*)
      type(c_ptr) :: out
    end function
    integer(c_int) function ct_eigh(a, range, backend, w_out, v_out) bind(c)
      import :: c_ptr, c_int, c_int32_t
      type(c_ptr), value :: a, range
      integer(c_int32_t), value :: backend
      type(c_ptr) :: w_out, v_out
    end function
    integer(c_int) function ct_tensor_data(t, out) bind(c)
      import :: c_ptr, c_int
      type(c_ptr), value :: t
      type(c_ptr) :: out
    end function
    integer(c_int) function ct_tensor_free(t) bind(c)
      import :: c_ptr, c_int
      type(c_ptr), value :: t
    end function
    integer(c_int) function ct_zheevd(jobz, uplo, n, a, lda, w) bind(c)
      import :: c_char, c_int, c_size_t, c_double_complex, c_double
      character(kind=c_char), value :: jobz, uplo
      integer(c_size_t), value :: n, lda
      complex(c_double_complex) :: a(lda, *)
      real(c_double) :: w(*)
    end function
  end interface
end module

program client
  use ctensor
  implicit none
  integer, parameter :: n = 3
  complex(c_double_complex), target :: a(n, n), b(n, n)
  real(c_double), pointer :: w(:)
  complex(c_double_complex), pointer :: v(:, :)
  real(c_double) :: wk(n), err
  integer(c_size_t) :: shape(2)
  type(c_ptr) :: ta, tw, tv, pw, pv
  integer :: i, failures

  failures = 0
  ! A Hermitian matrix, column-major as Fortran stores it.
  a = reshape([(2.0d0, 0.0d0), (1.0d0, 1.0d0), (0.0d0, 0.0d0), &
               (1.0d0, -1.0d0), (3.0d0, 0.0d0), (0.0d0, 2.0d0), &
               (0.0d0, 0.0d0), (0.0d0, -2.0d0), (4.0d0, 0.0d0)], [n, n])
  shape = [int(n, c_size_t), int(n, c_size_t)]
  if (ct_tensor_map(c_loc(a), CT_C64, CT_CPU, 2_c_size_t, shape, CT_COL_MAJOR, ta) /= CT_OK) stop 2
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
  if (ct_tensor_free(ta) /= CT_OK .or. ct_tensor_free(tw) /= CT_OK .or. ct_tensor_free(tv) /= CT_OK) stop 7
  if (failures > 0) stop 1
  print '(a)', 'client.f90: all checks passed'
end program
