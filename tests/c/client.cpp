// A C++ client of ctensor's ABI through the same header, with RAII wrappers: a tensor
// handle freed by its destructor, errors turned into exceptions. Exits non-zero on any
// mismatch. Built and run by `make test` (tests/c/run.sh).
#include <cmath>
#include <complex>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ctensor.h"

namespace {

void check(ct_status s, const char* what) {
  if (s != CT_OK) throw std::runtime_error(std::string(what) + ": " + ct_last_error_message());
}

// Owns one ct_tensor handle.
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(ct_tensor* h) : h_(h) {}
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;
  Tensor(Tensor&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  ~Tensor() {
    if (h_) ct_tensor_free(h_);
  }
  ct_tensor* get() const { return h_; }
  ct_tensor** out() { return &h_; }
  template <class T>
  T* data() const {
    void* p = nullptr;
    check(ct_tensor_data(h_, &p), "ct_tensor_data");
    return static_cast<T*>(p);
  }

 private:
  ct_tensor* h_ = nullptr;
};

Tensor from_host(int32_t dtype, std::vector<size_t> shape, const void* data) {
  Tensor t;
  check(ct_tensor_from_host(dtype, shape.size(), shape.data(), CT_ROW_MAJOR, data, t.out()), "from_host");
  return t;
}

}  // namespace

int main() {
  int failures = 0;
  auto expect = [&](bool ok, const std::string& what) {
    if (!ok) {
      std::fprintf(stderr, "client.cpp: %s\n", what.c_str());
      failures++;
    }
  };
  try {
    using cd = std::complex<double>;
    // The Hermitian [[2, 1-i], [1+i, 3]]: eigenvalues 1 and 4, lowest one only.
    std::vector<cd> h = {{2, 0}, {1, -1}, {1, 1}, {3, 0}};
    Tensor a = from_host(CT_C64, {2, 2}, h.data());
    ct_eig_range lowest{1, 0, 1, 0.0, 0.0};
    Tensor w, v;
    check(ct_eigh(a.get(), &lowest, 0, w.out(), v.out()), "ct_eigh");
    expect(std::abs(w.data<double>()[0] - 1.0) < 1e-12, "lowest eigenvalue");
    // matmul and einsum agree: A·A = einsum("ij,jk->ik").
    Tensor p, q;
    check(ct_matmul(a.get(), a.get(), p.out()), "ct_matmul");
    ct_tensor* ops[2] = {a.get(), a.get()};
    check(ct_einsum("ij,jk->ik", 2, ops, nullptr, q.out()), "ct_einsum");
    // The prototype's own const form compiles as well (C++ converts both).
    const ct_tensor* const_ops[2] = {a.get(), a.get()};
    Tensor q2;
    check(ct_einsum("ij,jk->ik", 2, const_ops, nullptr, q2.out()), "ct_einsum (const operands)");
    for (int i = 0; i < 4; i++) expect(q2.data<cd>()[i] == q.data<cd>()[i], "const operands");
    for (int i = 0; i < 4; i++) expect(std::abs(p.data<cd>()[i] - q.data<cd>()[i]) < 1e-12, "matmul vs einsum");
    // An error becomes an exception with the message.
    bool threw = false;
    try {
      Tensor bad;
      check(ct_einsum("ij,jk->i?", 2, ops, nullptr, bad.out()), "ct_einsum");
    } catch (const std::runtime_error& e) {
      threw = std::string(e.what()).find("position 8") != std::string::npos;
    }
    expect(threw, "a malformed equation throws with its position");
  } catch (const std::exception& e) {
    std::fprintf(stderr, "client.cpp: unexpected error: %s\n", e.what());
    return 1;
  }
  if (failures) return 1;
  std::printf("client.cpp: all checks passed\n");
  return 0;
}
