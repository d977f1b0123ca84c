! ctensor: the Fortran module over the C ABI. Generated from include/ctensor.h by
! tests/fortran_module.rs (make header); do not edit.
!
! Every ct_* function returns a status (CT_OK == 0); ct_error_message() gives the
! message. Handles are type(c_ptr). Character arguments are NUL-terminated: pass
! 'ij,jk->ik'//c_null_char. Nullable struct pointers (range, opts) are type(c_ptr):
! pass c_loc(x) or c_null_ptr. Link with the libraries `make link-flags` prints.
module ctensor
  use, intrinsic :: iso_c_binding
  use, intrinsic :: iso_fortran_env, only: error_unit
  implicit none

  integer(c_int32_t), parameter :: CT_OK = 0
  integer(c_int32_t), parameter :: CT_ERR_NULL = 1
  integer(c_int32_t), parameter :: CT_ERR_INVALID_HANDLE = 2
  integer(c_int32_t), parameter :: CT_ERR_SHAPE = 3
  integer(c_int32_t), parameter :: CT_ERR_DTYPE = 4
  integer(c_int32_t), parameter :: CT_ERR_DEVICE = 5
  integer(c_int32_t), parameter :: CT_ERR_LAPACK = 6
  integer(c_int32_t), parameter :: CT_ERR_INVALID_ARGUMENT = 7
  integer(c_int32_t), parameter :: CT_ERR_ALLOC = 8
  integer(c_int32_t), parameter :: CT_ERR_BORROW = 9
  integer(c_int32_t), parameter :: CT_ERR_PANIC = 10
  integer(c_int32_t), parameter :: CT_ERR_INTERNAL = 11
  integer(c_int32_t), parameter :: CT_ERR_IO = 12
  integer(c_int32_t), parameter :: CT_F32 = 0
  integer(c_int32_t), parameter :: CT_F64 = 1
  integer(c_int32_t), parameter :: CT_I32 = 2
  integer(c_int32_t), parameter :: CT_I64 = 3
  integer(c_int32_t), parameter :: CT_C32 = 4
  integer(c_int32_t), parameter :: CT_C64 = 5
  integer(c_int32_t), parameter :: CT_F16 = 6
  integer(c_int32_t), parameter :: CT_BF16 = 7
  integer(c_int32_t), parameter :: CT_CPU = 0
  integer(c_int32_t), parameter :: CT_GPU = 1
  integer(c_int32_t), parameter :: CT_ROW_MAJOR = 0
  integer(c_int32_t), parameter :: CT_COL_MAJOR = 1

  type, bind(c) :: ct_memory_stats
    integer(c_int64_t) :: allocated
    integer(c_int64_t) :: peak_allocated
    integer(c_int64_t) :: reserved
    integer(c_int64_t) :: peak_reserved
    integer(c_int64_t) :: live_blocks
    integer(c_int64_t) :: allocations
    integer(c_int64_t) :: cache_hits
    integer(c_int64_t) :: segments_reserved
    integer(c_int64_t) :: oom_retries
    integer(c_int64_t) :: deferred_blocks
  end type ct_memory_stats
  type, bind(c) :: ct_einsum_options
    integer(c_int32_t) :: conj_x
    integer(c_int32_t) :: conj_y
    real(c_double) :: alpha_re
    real(c_double) :: alpha_im
    real(c_double) :: beta_re
    real(c_double) :: beta_im
  end type ct_einsum_options
  type, bind(c) :: ct_eig_range
    integer(c_int32_t) :: kind
    integer(c_size_t) :: lo
    integer(c_size_t) :: hi
    real(c_double) :: vl
    real(c_double) :: vu
  end type ct_eig_range

  interface
    function ct_device_available(device, out) bind(c, name="ct_device_available")
      import
      integer(c_int) :: ct_device_available
      integer(c_int32_t), value :: device
      integer(c_int32_t), intent(out) :: out
    end function ct_device_available
    function ct_device_synchronize(device) bind(c, name="ct_device_synchronize")
      import
      integer(c_int) :: ct_device_synchronize
      integer(c_int32_t), value :: device
    end function ct_device_synchronize
    function ct_gpu_stream(out) bind(c, name="ct_gpu_stream")
      import
      integer(c_int) :: ct_gpu_stream
      type(c_ptr), intent(out) :: out
    end function ct_gpu_stream
    function ct_set_check_finite(on) bind(c, name="ct_set_check_finite")
      import
      integer(c_int) :: ct_set_check_finite
      integer(c_int32_t), value :: on
    end function ct_set_check_finite
    function ct_set_num_threads(n) bind(c, name="ct_set_num_threads")
      import
      integer(c_int) :: ct_set_num_threads
      integer(c_size_t), value :: n
    end function ct_set_num_threads
    function ct_tensor_to_dlpack(t, out) bind(c, name="ct_tensor_to_dlpack")
      import
      integer(c_int) :: ct_tensor_to_dlpack
      type(c_ptr), value :: t
      type(c_ptr), intent(out) :: out
    end function ct_tensor_to_dlpack
    function ct_tensor_from_dlpack(managed, out) bind(c, name="ct_tensor_from_dlpack")
      import
      integer(c_int) :: ct_tensor_from_dlpack
      type(c_ptr), value :: managed
      type(c_ptr), intent(out) :: out
    end function ct_tensor_from_dlpack
    function ct_tensor_from_dlpack_legacy(managed, out) bind(c, name="ct_tensor_from_dlpack_legacy")
      import
      integer(c_int) :: ct_tensor_from_dlpack_legacy
      type(c_ptr), value :: managed
      type(c_ptr), intent(out) :: out
    end function ct_tensor_from_dlpack_legacy
    function ct_tensor_save_npy(t, path) bind(c, name="ct_tensor_save_npy")
      import
      integer(c_int) :: ct_tensor_save_npy
      type(c_ptr), value :: t
      character(kind=c_char), intent(in) :: path(*)
    end function ct_tensor_save_npy
    function ct_tensor_load_npy(path, device, out) bind(c, name="ct_tensor_load_npy")
      import
      integer(c_int) :: ct_tensor_load_npy
      character(kind=c_char), intent(in) :: path(*)
      integer(c_int32_t), value :: device
      type(c_ptr), intent(out) :: out
    end function ct_tensor_load_npy
    function ct_dgemm(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) bind(c, name="ct_dgemm")
      import
      integer(c_int) :: ct_dgemm
      character(kind=c_char), value :: transa
      character(kind=c_char), value :: transb
      integer(c_size_t), value :: m
      integer(c_size_t), value :: n
      integer(c_size_t), value :: k
      real(c_double), value :: alpha
      real(c_double), intent(in) :: a(*)
      integer(c_size_t), value :: lda
      real(c_double), intent(in) :: b(*)
      integer(c_size_t), value :: ldb
      real(c_double), value :: beta
      real(c_double), intent(inout) :: c(*)
      integer(c_size_t), value :: ldc
    end function ct_dgemm
    function ct_zgemm(transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) bind(c, name="ct_zgemm")
      import
      integer(c_int) :: ct_zgemm
      character(kind=c_char), value :: transa
      character(kind=c_char), value :: transb
      integer(c_size_t), value :: m
      integer(c_size_t), value :: n
      integer(c_size_t), value :: k
      complex(c_double_complex), intent(in) :: alpha
      complex(c_double_complex), intent(in) :: a(*)
      integer(c_size_t), value :: lda
      complex(c_double_complex), intent(in) :: b(*)
      integer(c_size_t), value :: ldb
      complex(c_double_complex), intent(in) :: beta
      complex(c_double_complex), intent(inout) :: c(*)
      integer(c_size_t), value :: ldc
    end function ct_zgemm
    function ct_dsyevd(jobz, uplo, n, a, lda, w) bind(c, name="ct_dsyevd")
      import
      integer(c_int) :: ct_dsyevd
      character(kind=c_char), value :: jobz
      character(kind=c_char), value :: uplo
      integer(c_size_t), value :: n
      real(c_double), intent(inout) :: a(*)
      integer(c_size_t), value :: lda
      real(c_double), intent(inout) :: w(*)
    end function ct_dsyevd
    function ct_zheevd(jobz, uplo, n, a, lda, w) bind(c, name="ct_zheevd")
      import
      integer(c_int) :: ct_zheevd
      character(kind=c_char), value :: jobz
      character(kind=c_char), value :: uplo
      integer(c_size_t), value :: n
      complex(c_double_complex), intent(inout) :: a(*)
      integer(c_size_t), value :: lda
      real(c_double), intent(inout) :: w(*)
    end function ct_zheevd
    function ct_gemm(dtype, device, transa, transb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) bind(c, name="ct_gemm")
      import
      integer(c_int) :: ct_gemm
      integer(c_int32_t), value :: dtype
      integer(c_int32_t), value :: device
      character(kind=c_char), value :: transa
      character(kind=c_char), value :: transb
      integer(c_size_t), value :: m
      integer(c_size_t), value :: n
      integer(c_size_t), value :: k
      type(c_ptr), value :: alpha
      type(c_ptr), value :: a
      integer(c_size_t), value :: lda
      type(c_ptr), value :: b
      integer(c_size_t), value :: ldb
      type(c_ptr), value :: beta
      type(c_ptr), value :: c
      integer(c_size_t), value :: ldc
    end function ct_gemm
    function ct_heevd(dtype, device, jobz, uplo, n, a, lda, w) bind(c, name="ct_heevd")
      import
      integer(c_int) :: ct_heevd
      integer(c_int32_t), value :: dtype
      integer(c_int32_t), value :: device
      character(kind=c_char), value :: jobz
      character(kind=c_char), value :: uplo
      integer(c_size_t), value :: n
      type(c_ptr), value :: a
      integer(c_size_t), value :: lda
      type(c_ptr), value :: w
    end function ct_heevd
    function ct_sin(a, out) bind(c, name="ct_sin")
      import
      integer(c_int) :: ct_sin
      type(c_ptr), value :: a
      type(c_ptr), intent(out) :: out
    end function ct_sin
    function ct_cos(a, out) bind(c, name="ct_cos")
      import
      integer(c_int) :: ct_cos
      type(c_ptr), value :: a
      type(c_ptr), intent(out) :: out
    end function ct_cos
    function ct_tan(a, out) bind(c, name="ct_tan")
      import
      integer(c_int) :: ct_tan
      type(c_ptr), value :: a
      type(c_ptr), intent(out) :: out
    end function ct_tan
    function ct_log(a, out) bind(c, name="ct_log")
      import
      integer(c_int) :: ct_log
      type(c_ptr), value :: a
      type(c_ptr), intent(out) :: out
    end function ct_log
    function ct_log1p(a, out) bind(c, name="ct_log1p")
      import
      integer(c_int) :: ct_log1p
      type(c_ptr), value :: a
      type(c_ptr), intent(out) :: out
    end function ct_log1p
    function ct_expm1(a, out) bind(c, name="ct_expm1")
      import
      integer(c_int) :: ct_expm1
      type(c_ptr), value :: a
      type(c_ptr), intent(out) :: out
    end function ct_expm1
    function ct_square(a, out) bind(c, name="ct_square")
      import
      integer(c_int) :: ct_square
      type(c_ptr), value :: a
      type(c_ptr), intent(out) :: out
    end function ct_square
    function ct_reciprocal(a, out) bind(c, name="ct_reciprocal")
      import
      integer(c_int) :: ct_reciprocal
      type(c_ptr), value :: a
      type(c_ptr), intent(out) :: out
    end function ct_reciprocal
    function ct_rsqrt(a, out) bind(c, name="ct_rsqrt")
      import
      integer(c_int) :: ct_rsqrt
      type(c_ptr), value :: a
      type(c_ptr), intent(out) :: out
    end function ct_rsqrt
    function ct_sign(a, out) bind(c, name="ct_sign")
      import
      integer(c_int) :: ct_sign
      type(c_ptr), value :: a
      type(c_ptr), intent(out) :: out
    end function ct_sign
    function ct_floor(a, out) bind(c, name="ct_floor")
      import
      integer(c_int) :: ct_floor
      type(c_ptr), value :: a
      type(c_ptr), intent(out) :: out
    end function ct_floor
    function ct_ceil(a, out) bind(c, name="ct_ceil")
      import
      integer(c_int) :: ct_ceil
      type(c_ptr), value :: a
      type(c_ptr), intent(out) :: out
    end function ct_ceil
    function ct_round(a, out) bind(c, name="ct_round")
      import
      integer(c_int) :: ct_round
      type(c_ptr), value :: a
      type(c_ptr), intent(out) :: out
    end function ct_round
    function ct_neg(a, out) bind(c, name="ct_neg")
      import
      integer(c_int) :: ct_neg
      type(c_ptr), value :: a
      type(c_ptr), intent(out) :: out
    end function ct_neg
    function ct_sqrt(a, out) bind(c, name="ct_sqrt")
      import
      integer(c_int) :: ct_sqrt
      type(c_ptr), value :: a
      type(c_ptr), intent(out) :: out
    end function ct_sqrt
    function ct_exp(a, out) bind(c, name="ct_exp")
      import
      integer(c_int) :: ct_exp
      type(c_ptr), value :: a
      type(c_ptr), intent(out) :: out
    end function ct_exp
    function ct_pow(a, b, out) bind(c, name="ct_pow")
      import
      integer(c_int) :: ct_pow
      type(c_ptr), value :: a
      type(c_ptr), value :: b
      type(c_ptr), intent(out) :: out
    end function ct_pow
    function ct_atan2(a, b, out) bind(c, name="ct_atan2")
      import
      integer(c_int) :: ct_atan2
      type(c_ptr), value :: a
      type(c_ptr), value :: b
      type(c_ptr), intent(out) :: out
    end function ct_atan2
    function ct_hypot(a, b, out) bind(c, name="ct_hypot")
      import
      integer(c_int) :: ct_hypot
      type(c_ptr), value :: a
      type(c_ptr), value :: b
      type(c_ptr), intent(out) :: out
    end function ct_hypot
    function ct_copysign(a, b, out) bind(c, name="ct_copysign")
      import
      integer(c_int) :: ct_copysign
      type(c_ptr), value :: a
      type(c_ptr), value :: b
      type(c_ptr), intent(out) :: out
    end function ct_copysign
    function ct_fmod(a, b, out) bind(c, name="ct_fmod")
      import
      integer(c_int) :: ct_fmod
      type(c_ptr), value :: a
      type(c_ptr), value :: b
      type(c_ptr), intent(out) :: out
    end function ct_fmod
    function ct_lt(a, b, out) bind(c, name="ct_lt")
      import
      integer(c_int) :: ct_lt
      type(c_ptr), value :: a
      type(c_ptr), value :: b
      type(c_ptr), intent(out) :: out
    end function ct_lt
    function ct_le(a, b, out) bind(c, name="ct_le")
      import
      integer(c_int) :: ct_le
      type(c_ptr), value :: a
      type(c_ptr), value :: b
      type(c_ptr), intent(out) :: out
    end function ct_le
    function ct_gt(a, b, out) bind(c, name="ct_gt")
      import
      integer(c_int) :: ct_gt
      type(c_ptr), value :: a
      type(c_ptr), value :: b
      type(c_ptr), intent(out) :: out
    end function ct_gt
    function ct_ge(a, b, out) bind(c, name="ct_ge")
      import
      integer(c_int) :: ct_ge
      type(c_ptr), value :: a
      type(c_ptr), value :: b
      type(c_ptr), intent(out) :: out
    end function ct_ge
    function ct_equal(a, b, out) bind(c, name="ct_equal")
      import
      integer(c_int) :: ct_equal
      type(c_ptr), value :: a
      type(c_ptr), value :: b
      type(c_ptr), intent(out) :: out
    end function ct_equal
    function ct_not_equal(a, b, out) bind(c, name="ct_not_equal")
      import
      integer(c_int) :: ct_not_equal
      type(c_ptr), value :: a
      type(c_ptr), value :: b
      type(c_ptr), intent(out) :: out
    end function ct_not_equal
    function ct_abs(a, out) bind(c, name="ct_abs")
      import
      integer(c_int) :: ct_abs
      type(c_ptr), value :: a
      type(c_ptr), intent(out) :: out
    end function ct_abs
    function ct_logaddexp(a, b, out) bind(c, name="ct_logaddexp")
      import
      integer(c_int) :: ct_logaddexp
      type(c_ptr), value :: a
      type(c_ptr), value :: b
      type(c_ptr), intent(out) :: out
    end function ct_logaddexp
    function ct_gpu_memory_stats(out) bind(c, name="ct_gpu_memory_stats")
      import
      integer(c_int) :: ct_gpu_memory_stats
      type(ct_memory_stats), intent(out) :: out
    end function ct_gpu_memory_stats
    function ct_gpu_empty_cache() bind(c, name="ct_gpu_empty_cache")
      import
      integer(c_int) :: ct_gpu_empty_cache
    end function ct_gpu_empty_cache
    function ct_mirrored_new(dtype, ndim, shape, out) bind(c, name="ct_mirrored_new")
      import
      integer(c_int) :: ct_mirrored_new
      integer(c_int32_t), value :: dtype
      integer(c_size_t), value :: ndim
      integer(c_size_t), intent(in) :: shape(*)
      type(c_ptr), intent(out) :: out
    end function ct_mirrored_new
    function ct_mirrored_from_tensor(t, out) bind(c, name="ct_mirrored_from_tensor")
      import
      integer(c_int) :: ct_mirrored_from_tensor
      type(c_ptr), value :: t
      type(c_ptr), intent(out) :: out
    end function ct_mirrored_from_tensor
    function ct_mirrored_read(m, device, out) bind(c, name="ct_mirrored_read")
      import
      integer(c_int) :: ct_mirrored_read
      type(c_ptr), value :: m
      integer(c_int32_t), value :: device
      type(c_ptr), intent(out) :: out
    end function ct_mirrored_read
    function ct_mirrored_write(m, device, out) bind(c, name="ct_mirrored_write")
      import
      integer(c_int) :: ct_mirrored_write
      type(c_ptr), value :: m
      integer(c_int32_t), value :: device
      type(c_ptr), intent(out) :: out
    end function ct_mirrored_write
    function ct_mirrored_write_only(m, device, out) bind(c, name="ct_mirrored_write_only")
      import
      integer(c_int) :: ct_mirrored_write_only
      type(c_ptr), value :: m
      integer(c_int32_t), value :: device
      type(c_ptr), intent(out) :: out
    end function ct_mirrored_write_only
    function ct_mirrored_version(m, device, version, current) bind(c, name="ct_mirrored_version")
      import
      integer(c_int) :: ct_mirrored_version
      type(c_ptr), value :: m
      integer(c_int32_t), value :: device
      integer(c_int64_t), intent(out) :: version
      integer(c_int32_t), intent(out) :: current
    end function ct_mirrored_version
    function ct_mirrored_free(m) bind(c, name="ct_mirrored_free")
      import
      integer(c_int) :: ct_mirrored_free
      type(c_ptr), value :: m
    end function ct_mirrored_free
    function ct_pinned_memory_stats(out) bind(c, name="ct_pinned_memory_stats")
      import
      integer(c_int) :: ct_pinned_memory_stats
      type(ct_memory_stats), intent(out) :: out
    end function ct_pinned_memory_stats
    function ct_pinned_empty_cache() bind(c, name="ct_pinned_empty_cache")
      import
      integer(c_int) :: ct_pinned_empty_cache
    end function ct_pinned_empty_cache
    function ct_tensor_pinned(dtype, ndim, shape, order, out) bind(c, name="ct_tensor_pinned")
      import
      integer(c_int) :: ct_tensor_pinned
      integer(c_int32_t), value :: dtype
      integer(c_size_t), value :: ndim
      integer(c_size_t), intent(in) :: shape(*)
      integer(c_int32_t), value :: order
      type(c_ptr), intent(out) :: out
    end function ct_tensor_pinned
    function ct_tensor_is_pinned(t, out) bind(c, name="ct_tensor_is_pinned")
      import
      integer(c_int) :: ct_tensor_is_pinned
      type(c_ptr), value :: t
      integer(c_int32_t), intent(out) :: out
    end function ct_tensor_is_pinned
    function ct_mirrored_prefetch(m, device, s) bind(c, name="ct_mirrored_prefetch")
      import
      integer(c_int) :: ct_mirrored_prefetch
      type(c_ptr), value :: m
      integer(c_int32_t), value :: device
      type(c_ptr), value :: s
    end function ct_mirrored_prefetch
    function ct_stream_new(out) bind(c, name="ct_stream_new")
      import
      integer(c_int) :: ct_stream_new
      type(c_ptr), intent(out) :: out
    end function ct_stream_new
    function ct_stream_default(out) bind(c, name="ct_stream_default")
      import
      integer(c_int) :: ct_stream_default
      type(c_ptr), intent(out) :: out
    end function ct_stream_default
    function ct_stream_synchronize(s) bind(c, name="ct_stream_synchronize")
      import
      integer(c_int) :: ct_stream_synchronize
      type(c_ptr), value :: s
    end function ct_stream_synchronize
    function ct_stream_free(s) bind(c, name="ct_stream_free")
      import
      integer(c_int) :: ct_stream_free
      type(c_ptr), value :: s
    end function ct_stream_free
    function ct_tensor_to_device_async(t, device, s, out) bind(c, name="ct_tensor_to_device_async")
      import
      integer(c_int) :: ct_tensor_to_device_async
      type(c_ptr), value :: t
      integer(c_int32_t), value :: device
      type(c_ptr), value :: s
      type(c_ptr), intent(out) :: out
    end function ct_tensor_to_device_async
    function ct_tensor_sync_async(dst, src, s) bind(c, name="ct_tensor_sync_async")
      import
      integer(c_int) :: ct_tensor_sync_async
      type(c_ptr), value :: dst
      type(c_ptr), value :: src
      type(c_ptr), value :: s
    end function ct_tensor_sync_async
    function ct_tensor_synchronize(t) bind(c, name="ct_tensor_synchronize")
      import
      integer(c_int) :: ct_tensor_synchronize
      type(c_ptr), value :: t
    end function ct_tensor_synchronize
    function ct_add(a, b, out) bind(c, name="ct_add")
      import
      integer(c_int) :: ct_add
      type(c_ptr), value :: a
      type(c_ptr), value :: b
      type(c_ptr), intent(out) :: out
    end function ct_add
    function ct_sub(a, b, out) bind(c, name="ct_sub")
      import
      integer(c_int) :: ct_sub
      type(c_ptr), value :: a
      type(c_ptr), value :: b
      type(c_ptr), intent(out) :: out
    end function ct_sub
    function ct_mul(a, b, out) bind(c, name="ct_mul")
      import
      integer(c_int) :: ct_mul
      type(c_ptr), value :: a
      type(c_ptr), value :: b
      type(c_ptr), intent(out) :: out
    end function ct_mul
    function ct_div(a, b, out) bind(c, name="ct_div")
      import
      integer(c_int) :: ct_div
      type(c_ptr), value :: a
      type(c_ptr), value :: b
      type(c_ptr), intent(out) :: out
    end function ct_div
    function ct_einsum_default_options() bind(c, name="ct_einsum_default_options")
      import
      type(ct_einsum_options) :: ct_einsum_default_options
    end function ct_einsum_default_options
    function ct_einsum(eq, n, operands, opts, out) bind(c, name="ct_einsum")
      import
      integer(c_int) :: ct_einsum
      character(kind=c_char), intent(in) :: eq(*)
      integer(c_size_t), value :: n
      type(c_ptr), intent(in) :: operands(*)
      type(c_ptr), value :: opts
      type(c_ptr), intent(out) :: out
    end function ct_einsum
    function ct_einsum_into(eq, n, operands, opts, out) bind(c, name="ct_einsum_into")
      import
      integer(c_int) :: ct_einsum_into
      character(kind=c_char), intent(in) :: eq(*)
      integer(c_size_t), value :: n
      type(c_ptr), intent(in) :: operands(*)
      type(c_ptr), value :: opts
      type(c_ptr), value :: out
    end function ct_einsum_into
    function ct_matmul(a, b, out) bind(c, name="ct_matmul")
      import
      integer(c_int) :: ct_matmul
      type(c_ptr), value :: a
      type(c_ptr), value :: b
      type(c_ptr), intent(out) :: out
    end function ct_matmul
    function ct_eigh(a, range, backend, w_out, v_out) bind(c, name="ct_eigh")
      import
      integer(c_int) :: ct_eigh
      type(c_ptr), value :: a
      type(c_ptr), value :: range
      integer(c_int32_t), value :: backend
      type(c_ptr), intent(out) :: w_out
      type(c_ptr), intent(out) :: v_out
    end function ct_eigh
    function ct_eigh_generalized(a, b, itype, range, w_out, v_out) bind(c, name="ct_eigh_generalized")
      import
      integer(c_int) :: ct_eigh_generalized
      type(c_ptr), value :: a
      type(c_ptr), value :: b
      integer(c_int32_t), value :: itype
      type(c_ptr), value :: range
      type(c_ptr), intent(out) :: w_out
      type(c_ptr), intent(out) :: v_out
    end function ct_eigh_generalized
    function ct_cholesky(a, uplo, out) bind(c, name="ct_cholesky")
      import
      integer(c_int) :: ct_cholesky
      type(c_ptr), value :: a
      character(kind=c_char), value :: uplo
      type(c_ptr), intent(out) :: out
    end function ct_cholesky
    function ct_tri_inverse(a, uplo, diag, out) bind(c, name="ct_tri_inverse")
      import
      integer(c_int) :: ct_tri_inverse
      type(c_ptr), value :: a
      character(kind=c_char), value :: uplo
      character(kind=c_char), value :: diag
      type(c_ptr), intent(out) :: out
    end function ct_tri_inverse
    function ct_solve(a, b, out) bind(c, name="ct_solve")
      import
      integer(c_int) :: ct_solve
      type(c_ptr), value :: a
      type(c_ptr), value :: b
      type(c_ptr), intent(out) :: out
    end function ct_solve
    function ct_last_error_message() bind(c, name="ct_last_error_message")
      import
      type(c_ptr) :: ct_last_error_message
    end function ct_last_error_message
    function ct_version() bind(c, name="ct_version")
      import
      type(c_ptr) :: ct_version
    end function ct_version
    function ct_tensor_zeros(dtype, device, ndim, shape, out) bind(c, name="ct_tensor_zeros")
      import
      integer(c_int) :: ct_tensor_zeros
      integer(c_int32_t), value :: dtype
      integer(c_int32_t), value :: device
      integer(c_size_t), value :: ndim
      integer(c_size_t), intent(in) :: shape(*)
      type(c_ptr), intent(out) :: out
    end function ct_tensor_zeros
    function ct_tensor_from_host(dtype, ndim, shape, order, data, out) bind(c, name="ct_tensor_from_host")
      import
      integer(c_int) :: ct_tensor_from_host
      integer(c_int32_t), value :: dtype
      integer(c_size_t), value :: ndim
      integer(c_size_t), intent(in) :: shape(*)
      integer(c_int32_t), value :: order
      type(c_ptr), value :: data
      type(c_ptr), intent(out) :: out
    end function ct_tensor_from_host
    function ct_tensor_map(data, dtype, device, ndim, shape, order, out) bind(c, name="ct_tensor_map")
      import
      integer(c_int) :: ct_tensor_map
      type(c_ptr), value :: data
      integer(c_int32_t), value :: dtype
      integer(c_int32_t), value :: device
      integer(c_size_t), value :: ndim
      integer(c_size_t), intent(in) :: shape(*)
      integer(c_int32_t), value :: order
      type(c_ptr), intent(out) :: out
    end function ct_tensor_map
    function ct_tensor_free(t) bind(c, name="ct_tensor_free")
      import
      integer(c_int) :: ct_tensor_free
      type(c_ptr), value :: t
    end function ct_tensor_free
    function ct_tensor_clone(t, out) bind(c, name="ct_tensor_clone")
      import
      integer(c_int) :: ct_tensor_clone
      type(c_ptr), value :: t
      type(c_ptr), intent(out) :: out
    end function ct_tensor_clone
    function ct_tensor_copy_from(dst, src) bind(c, name="ct_tensor_copy_from")
      import
      integer(c_int) :: ct_tensor_copy_from
      type(c_ptr), value :: dst
      type(c_ptr), value :: src
    end function ct_tensor_copy_from
    function ct_tensor_sync(dst, src) bind(c, name="ct_tensor_sync")
      import
      integer(c_int) :: ct_tensor_sync
      type(c_ptr), value :: dst
      type(c_ptr), value :: src
    end function ct_tensor_sync
    function ct_tensor_to_device(t, device, out) bind(c, name="ct_tensor_to_device")
      import
      integer(c_int) :: ct_tensor_to_device
      type(c_ptr), value :: t
      integer(c_int32_t), value :: device
      type(c_ptr), intent(out) :: out
    end function ct_tensor_to_device
    function ct_tensor_cast(t, dtype, out) bind(c, name="ct_tensor_cast")
      import
      integer(c_int) :: ct_tensor_cast
      type(c_ptr), value :: t
      integer(c_int32_t), value :: dtype
      type(c_ptr), intent(out) :: out
    end function ct_tensor_cast
    function ct_tensor_reshape(t, ndim, shape, out) bind(c, name="ct_tensor_reshape")
      import
      integer(c_int) :: ct_tensor_reshape
      type(c_ptr), value :: t
      integer(c_size_t), value :: ndim
      integer(c_int64_t), intent(in) :: shape(*)
      type(c_ptr), intent(out) :: out
    end function ct_tensor_reshape
    function ct_tensor_narrow(t, dim, start, len, out) bind(c, name="ct_tensor_narrow")
      import
      integer(c_int) :: ct_tensor_narrow
      type(c_ptr), value :: t
      integer(c_size_t), value :: dim
      integer(c_size_t), value :: start
      integer(c_size_t), value :: len
      type(c_ptr), intent(out) :: out
    end function ct_tensor_narrow
    function ct_tensor_index(t, i, out) bind(c, name="ct_tensor_index")
      import
      integer(c_int) :: ct_tensor_index
      type(c_ptr), value :: t
      integer(c_size_t), value :: i
      type(c_ptr), intent(out) :: out
    end function ct_tensor_index
    function ct_tensor_data(t, out) bind(c, name="ct_tensor_data")
      import
      integer(c_int) :: ct_tensor_data
      type(c_ptr), value :: t
      type(c_ptr), intent(out) :: out
    end function ct_tensor_data
    function ct_tensor_ndim(t, out) bind(c, name="ct_tensor_ndim")
      import
      integer(c_int) :: ct_tensor_ndim
      type(c_ptr), value :: t
      integer(c_size_t), intent(out) :: out
    end function ct_tensor_ndim
    function ct_tensor_shape(t, out) bind(c, name="ct_tensor_shape")
      import
      integer(c_int) :: ct_tensor_shape
      type(c_ptr), value :: t
      integer(c_size_t), intent(out) :: out(*)
    end function ct_tensor_shape
    function ct_tensor_strides(t, out) bind(c, name="ct_tensor_strides")
      import
      integer(c_int) :: ct_tensor_strides
      type(c_ptr), value :: t
      integer(c_size_t), intent(out) :: out(*)
    end function ct_tensor_strides
    function ct_tensor_dtype(t, out) bind(c, name="ct_tensor_dtype")
      import
      integer(c_int) :: ct_tensor_dtype
      type(c_ptr), value :: t
      integer(c_int32_t), intent(out) :: out
    end function ct_tensor_dtype
    function ct_tensor_device(t, out) bind(c, name="ct_tensor_device")
      import
      integer(c_int) :: ct_tensor_device
      type(c_ptr), value :: t
      integer(c_int32_t), intent(out) :: out
    end function ct_tensor_device
    function ct_tensor_zero(t) bind(c, name="ct_tensor_zero")
      import
      integer(c_int) :: ct_tensor_zero
      type(c_ptr), value :: t
    end function ct_tensor_zero
    function ct_tensor_set_value(t, re, im) bind(c, name="ct_tensor_set_value")
      import
      integer(c_int) :: ct_tensor_set_value
      type(c_ptr), value :: t
      real(c_double), value :: re
      real(c_double), value :: im
    end function ct_tensor_set_value
  end interface

  ! call ct_map(a, t [, status]): a real(8) or complex(8) array of rank 1-3, mapped
  ! column-major without a copy; t is the new ct_tensor handle (ct_tensor_free it).
  interface ct_map
    module procedure ct_map_r8_1, ct_map_r8_2, ct_map_r8_3, ct_map_c8_1, ct_map_c8_2, ct_map_c8_3
  end interface ct_map

  interface shape_of
    module procedure shape_r8_1, shape_r8_2, shape_r8_3, shape_c8_1, shape_c8_2, shape_c8_3
  end interface shape_of

contains

  ! The calling thread's last error message, as a Fortran string.
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

  ! Maps a column-major real(c_double) array of rank 1 as a tensor, without copying.
  subroutine ct_map_r8_1(a, t, status)
    real(c_double), intent(inout), target, contiguous :: a(:)
    type(c_ptr), intent(out) :: t
    integer(c_int), intent(out), optional :: status
    integer(c_size_t) :: shape(1)
    type(c_ptr) :: p
    shape = int(shape_of(a), c_size_t)
    p = c_null_ptr
    if (size(a) > 0) p = c_loc(a)
    call check(ct_tensor_map(p, CT_F64, CT_CPU, 1_c_size_t, shape, CT_COL_MAJOR, t), status)
  end subroutine ct_map_r8_1

  ! Maps a column-major real(c_double) array of rank 2 as a tensor, without copying.
  subroutine ct_map_r8_2(a, t, status)
    real(c_double), intent(inout), target, contiguous :: a(:,:)
    type(c_ptr), intent(out) :: t
    integer(c_int), intent(out), optional :: status
    integer(c_size_t) :: shape(2)
    type(c_ptr) :: p
    shape = int(shape_of(a), c_size_t)
    p = c_null_ptr
    if (size(a) > 0) p = c_loc(a)
    call check(ct_tensor_map(p, CT_F64, CT_CPU, 2_c_size_t, shape, CT_COL_MAJOR, t), status)
  end subroutine ct_map_r8_2

  ! Maps a column-major real(c_double) array of rank 3 as a tensor, without copying.
  subroutine ct_map_r8_3(a, t, status)
    real(c_double), intent(inout), target, contiguous :: a(:,:,:)
    type(c_ptr), intent(out) :: t
    integer(c_int), intent(out), optional :: status
    integer(c_size_t) :: shape(3)
    type(c_ptr) :: p
    shape = int(shape_of(a), c_size_t)
    p = c_null_ptr
    if (size(a) > 0) p = c_loc(a)
    call check(ct_tensor_map(p, CT_F64, CT_CPU, 3_c_size_t, shape, CT_COL_MAJOR, t), status)
  end subroutine ct_map_r8_3

  ! Maps a column-major complex(c_double_complex) array of rank 1 as a tensor, without copying.
  subroutine ct_map_c8_1(a, t, status)
    complex(c_double_complex), intent(inout), target, contiguous :: a(:)
    type(c_ptr), intent(out) :: t
    integer(c_int), intent(out), optional :: status
    integer(c_size_t) :: shape(1)
    type(c_ptr) :: p
    shape = int(shape_of(a), c_size_t)
    p = c_null_ptr
    if (size(a) > 0) p = c_loc(a)
    call check(ct_tensor_map(p, CT_C64, CT_CPU, 1_c_size_t, shape, CT_COL_MAJOR, t), status)
  end subroutine ct_map_c8_1

  ! Maps a column-major complex(c_double_complex) array of rank 2 as a tensor, without copying.
  subroutine ct_map_c8_2(a, t, status)
    complex(c_double_complex), intent(inout), target, contiguous :: a(:,:)
    type(c_ptr), intent(out) :: t
    integer(c_int), intent(out), optional :: status
    integer(c_size_t) :: shape(2)
    type(c_ptr) :: p
    shape = int(shape_of(a), c_size_t)
    p = c_null_ptr
    if (size(a) > 0) p = c_loc(a)
    call check(ct_tensor_map(p, CT_C64, CT_CPU, 2_c_size_t, shape, CT_COL_MAJOR, t), status)
  end subroutine ct_map_c8_2

  ! Maps a column-major complex(c_double_complex) array of rank 3 as a tensor, without copying.
  subroutine ct_map_c8_3(a, t, status)
    complex(c_double_complex), intent(inout), target, contiguous :: a(:,:,:)
    type(c_ptr), intent(out) :: t
    integer(c_int), intent(out), optional :: status
    integer(c_size_t) :: shape(3)
    type(c_ptr) :: p
    shape = int(shape_of(a), c_size_t)
    p = c_null_ptr
    if (size(a) > 0) p = c_loc(a)
    call check(ct_tensor_map(p, CT_C64, CT_CPU, 3_c_size_t, shape, CT_COL_MAJOR, t), status)
  end subroutine ct_map_c8_3

  pure function shape_r8_1(a) result(s)
    real(c_double), intent(in) :: a(:)
    integer :: s(1)
    s = shape(a)
  end function shape_r8_1

  pure function shape_r8_2(a) result(s)
    real(c_double), intent(in) :: a(:,:)
    integer :: s(2)
    s = shape(a)
  end function shape_r8_2

  pure function shape_r8_3(a) result(s)
    real(c_double), intent(in) :: a(:,:,:)
    integer :: s(3)
    s = shape(a)
  end function shape_r8_3

  pure function shape_c8_1(a) result(s)
    complex(c_double_complex), intent(in) :: a(:)
    integer :: s(1)
    s = shape(a)
  end function shape_c8_1

  pure function shape_c8_2(a) result(s)
    complex(c_double_complex), intent(in) :: a(:,:)
    integer :: s(2)
    s = shape(a)
  end function shape_c8_2

  pure function shape_c8_3(a) result(s)
    complex(c_double_complex), intent(in) :: a(:,:,:)
    integer :: s(3)
    s = shape(a)
  end function shape_c8_3

end module ctensor
