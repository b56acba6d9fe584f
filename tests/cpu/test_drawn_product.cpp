// drawn_product (sim/cpu/drawn_product.hpp) against drawing W whole and multiplying: the same bits, for the
// product and for the kept W, at any thread count and for shapes with one or several column blocks and
// passes over k (256 rows each). Exact equality is the claim (the strips are the draw's own entries and the
// product is thin_gemm_aw's), so the test asks for it.
#include <catch2/catch.hpp>

#include "random_matrix.hpp"
#include "sim/cpu/cpu_parallel.hpp"
#include "sim/cpu/drawn_product.hpp"

using normsim::sim::DrawKey;
using normsim::sim::Mat;

TEST_CASE("a product with W drawn strip by strip equals drawing W whole and multiplying, bit for bit",
          "[drawn_product]") {
  // A compile-time test: without AVX-512 drawn_product is not built, and the branch below is not compiled.
  if constexpr (!normsim::sim::has_thin_gemm) {
    WARN("built without AVX-512: the CPU backend draws W whole before every product, nothing to compare");
  } else {
    for (const auto& [T, k, n] : {std::tuple{64, 512, 2048}, std::tuple{13, 300, 64}, std::tuple{7, 1, 320},
                                  std::tuple{64, 2048, 512}}) {
      INFO("T " << T << ", k " << k << ", n " << n);
      const Mat<float> a = normsim::test::random_matrix(T, k, 21);
      const DrawKey key{42, 3, 5, normsim::sim::Stream{}};
      const double scale = 0.037;
      Mat<float> w, want;
      normsim::sim::draw_matrix(w, k, n, key, scale, 1);
      normsim::sim::product_by_columns(want, a, w, false, 1);
      for (const int threads : {1, 2}) {
        INFO(threads << " thread(s)");
        Mat<float> got, kept, unkept;
        int blocks = 0;
        normsim::sim::drawn_product(got, a, key, scale, n, &kept, threads, [&](Eigen::Index, Eigen::Index) {
#pragma omp atomic
          ++blocks;
        });
        REQUIRE(got == want);
        REQUIRE(kept == w);
        REQUIRE(blocks == (n + 255) / 256);  // after() ran once on each column block
        normsim::sim::drawn_product(unkept, a, key, scale, n, nullptr, threads,
                                    [](Eigen::Index, Eigen::Index) {});
        REQUIRE(unkept == want);
      }
    }
  }
}
