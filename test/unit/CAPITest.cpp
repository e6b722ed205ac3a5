//===- CAPITest.cpp - The C API of ke-c/ke.h ------------------------------===//
//
// Through the C functions only, as the Python package calls them: compile a
// matmul + bias + ReLU with two results, call it on memref descriptors that
// point at the test's buffers, save and load it, and every error path
// (bad IR, dynamic shapes, GPU targets, a missing database, wrong
// descriptors, corrupt files, null handles) returns a message.
//
//===----------------------------------------------------------------------===//

#include "ke-c/ke.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"

#include <cstdio>
#include <string>
#include <vector>

namespace {

/// Two results: the ReLU of A*B + bias, and A doubled.
constexpr llvm::StringLiteral kModule = R"mlir(
func.func @forward(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %bias: tensor<16xf32>)
    -> (tensor<4x16xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x16xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x16xf32>) -> tensor<4x16xf32>
  %mm = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%fill : tensor<4x16xf32>) -> tensor<4x16xf32>
  %out = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (j)>, affine_map<(i, j) -> (i, j)>],
                         iterator_types = ["parallel", "parallel"]}
      ins(%mm, %bias : tensor<4x16xf32>, tensor<16xf32>) outs(%empty : tensor<4x16xf32>) {
  ^bb0(%x: f32, %c: f32, %o: f32):
    %s = arith.addf %x, %c : f32
    %r = arith.maximumf %s, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4x16xf32>
  %empty2 = tensor.empty() : tensor<4x8xf32>
  %twice = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                           iterator_types = ["parallel", "parallel"]}
      ins(%a : tensor<4x8xf32>) outs(%empty2 : tensor<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %d = arith.addf %x, %x : f32
    linalg.yield %d : f32
  } -> tensor<4x8xf32>
  return %out, %twice : tensor<4x16xf32>, tensor<4x8xf32>
}
)mlir";

/// A row-major 2-D buffer and its memref descriptor.
struct Buffer2D {
  Buffer2D(int64_t rows, int64_t cols)
      : data(rows * cols), descriptor{0, 0, 0, rows, cols, cols, 1} {
    descriptor[0] = descriptor[1] = reinterpret_cast<int64_t>(data.data());
  }
  std::vector<float> data;
  int64_t descriptor[7];
};

/// Takes a message the C API returned: "" for success.
std::string take(char *message) {
  std::string text = message ? message : "";
  ke_message_free(message);
  return text;
}

ke_module *compileOrFail(llvm::StringRef text, const char *target = "cpu",
                         const char *database = nullptr) {
  ke_module *module = nullptr;
  EXPECT_EQ(take(ke_compile(text.data(), text.size(), "test.mlir", target,
                            database, &module)),
            "");
  return module;
}

/// Calls `forward` on fixed inputs and checks both results.
void checkForward(ke_module *module) {
  ke_function *function = nullptr;
  ASSERT_EQ(take(ke_module_lookup(module, "forward", &function)), "");
  ASSERT_EQ(ke_function_get_num_inputs(function), 3u);
  ASSERT_EQ(ke_function_get_num_results(function), 2u);
  EXPECT_EQ(ke_function_get_arg_rank(function, 2), 1u);
  EXPECT_EQ(ke_function_get_arg_shape(function, 3)[1], 16);
  EXPECT_STREQ(ke_function_get_arg_element_type(function, 4), "f32");
  EXPECT_EQ(ke_function_get_arg_shape(function, 5), nullptr);

  Buffer2D a(4, 8), b(8, 16), out(4, 16), twice(4, 8);
  int64_t bias[5] = {0, 0, 0, 16, 1};
  std::vector<float> biasData(16);
  bias[0] = bias[1] = reinterpret_cast<int64_t>(biasData.data());
  for (size_t i = 0; i < a.data.size(); ++i)
    a.data[i] = float(i % 7) - 3;
  for (size_t i = 0; i < b.data.size(); ++i)
    b.data[i] = float(i % 5) - 2;
  for (size_t i = 0; i < biasData.size(); ++i)
    biasData[i] = float(i) - 8;
  void *args[] = {a.descriptor, b.descriptor, bias, out.descriptor,
                  twice.descriptor};
  ASSERT_EQ(take(ke_function_call(function, args, 5)), "");
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 16; ++j) {
      float sum = biasData[j];
      for (int k = 0; k < 8; ++k)
        sum += a.data[i * 8 + k] * b.data[k * 16 + j];
      EXPECT_FLOAT_EQ(out.data[i * 16 + j], sum > 0 ? sum : 0);
    }
  for (size_t i = 0; i < a.data.size(); ++i)
    EXPECT_FLOAT_EQ(twice.data[i], 2 * a.data[i]);

  // Wrong count, shape, strides and a null descriptor are errors.
  EXPECT_NE(take(ke_function_call(function, args, 4)).find("takes 5 buffers"),
            std::string::npos);
  Buffer2D wrong(8, 4);
  void *wrongShape[] = {wrong.descriptor, b.descriptor, bias, out.descriptor,
                        twice.descriptor};
  EXPECT_NE(take(ke_function_call(function, wrongShape, 5))
                .find("input 0 of 'forward' has sizes [8, 4], expected [4, 8]"),
            std::string::npos);
  a.descriptor[5] = 16; // a row stride of 16: every other row
  EXPECT_NE(take(ke_function_call(function, args, 5)).find("not contiguous"),
            std::string::npos);
  a.descriptor[5] = 8;
  args[4] = nullptr;
  EXPECT_NE(take(ke_function_call(function, args, 5)).find("result 1"),
            std::string::npos);
}

TEST(CAPITest, CompilesCallsSavesAndLoads) {
  EXPECT_NE(llvm::StringRef(ke_version()).find('.'), llvm::StringRef::npos);
  EXPECT_TRUE(llvm::StringRef(ke_llvm_version()).starts_with("22."));
  ke_module *module = compileOrFail(kModule);
  ASSERT_NE(module, nullptr);
  EXPECT_NE(llvm::StringRef(ke_module_get_remarks(module)).find("test.mlir:"),
            llvm::StringRef::npos);
  ASSERT_EQ(ke_module_get_num_functions(module), 1u);
  EXPECT_STREQ(ke_module_get_function_name(module, 0), "forward");
  checkForward(module);

  llvm::SmallString<128> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("ke-capi", "kem", path));
  ASSERT_EQ(take(ke_module_save(module, path.c_str())), "");
  ke_module_destroy(module);
  ke_module *loaded = nullptr;
  ASSERT_EQ(take(ke_module_load(path.c_str(), &loaded)), "");
  EXPECT_STREQ(ke_module_get_remarks(loaded), "");
  checkForward(loaded);
  ke_function *function = nullptr;
  EXPECT_EQ(take(ke_module_lookup(loaded, nullptr, &function)), "");
  EXPECT_NE(take(ke_module_lookup(loaded, "backward", &function))
                .find("no function 'backward' in the module (it has: forward)"),
            std::string::npos);
  ke_module_destroy(loaded);

  // A truncated file and a file of another kind are refused.
  std::string bytes;
  {
    FILE *file = std::fopen(path.c_str(), "rb");
    ASSERT_NE(file, nullptr);
    char chunk[4096];
    size_t n;
    while ((n = std::fread(chunk, 1, sizeof(chunk), file)) > 0)
      bytes.append(chunk, n);
    std::fclose(file);
  }
  FILE *file = std::fopen(path.c_str(), "wb");
  std::fwrite(bytes.data(), 1, bytes.size() / 2, file);
  std::fclose(file);
  EXPECT_NE(take(ke_module_load(path.c_str(), &loaded)).find("truncated"),
            std::string::npos);
  file = std::fopen(path.c_str(), "wb");
  std::fputs("hello", file);
  std::fclose(file);
  EXPECT_NE(take(ke_module_load(path.c_str(), &loaded))
                .find("not a module saved by ke"),
            std::string::npos);
  EXPECT_EQ(loaded, nullptr);
  llvm::sys::fs::remove(path);
}

/// A keepdim row sum as torch-mlir writes it: a constant 0 in the output
/// map. cpu.tile once read that constant as a loop index (garbage from the
/// heap, so it crashed only once a previous compile had used the memory):
/// compiling it several times in one process must work every time.
TEST(CAPITest, CompilesKeepdimReductionsRepeatedly) {
  constexpr llvm::StringLiteral text = R"mlir(
func.func @forward(%a: tensor<4x16xf32>) -> tensor<4x1xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x1xf32>
  %fill = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x1xf32>) -> tensor<4x1xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, 0)>],
                         iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<4x16xf32>) outs(%fill : tensor<4x1xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %x, %acc : f32
    linalg.yield %s : f32
  } -> tensor<4x1xf32>
  return %sum : tensor<4x1xf32>
}
)mlir";
  for (int i = 0; i < 5; ++i) {
    ke_module *module = compileOrFail(text);
    ASSERT_NE(module, nullptr);
    ke_function *function = nullptr;
    ASSERT_EQ(take(ke_module_lookup(module, nullptr, &function)), "");
    Buffer2D a(4, 16), sum(4, 1);
    for (size_t j = 0; j < a.data.size(); ++j)
      a.data[j] = float(j % 16);
    void *args[] = {a.descriptor, sum.descriptor};
    ASSERT_EQ(take(ke_function_call(function, args, 2)), "");
    for (int row = 0; row < 4; ++row)
      EXPECT_FLOAT_EQ(sum.data[row], 120.0f);
    ke_module_destroy(module);
  }
}

TEST(CAPITest, ErrorsAreMessages) {
  ke_module *module = nullptr;
  auto compileError = [&](llvm::StringRef text, const char *target = "cpu",
                          const char *database = nullptr) {
    std::string message = take(ke_compile(text.data(), text.size(), "bad.mlir",
                                          target, database, &module));
    EXPECT_EQ(module, nullptr);
    return message;
  };
  EXPECT_NE(compileError("func.func @f(").find("bad.mlir:1:"),
            std::string::npos);
  EXPECT_NE(compileError("  \n").find("empty input"), std::string::npos);
  EXPECT_NE(compileError("func.func @f(%a: tensor<?x4xf32>) -> tensor<?x4xf32> "
                         "{ return %a : tensor<?x4xf32> }")
                .find("dynamic shapes are not supported yet"),
            std::string::npos);
  EXPECT_NE(compileError("module {}").find("no public function"),
            std::string::npos);
  EXPECT_NE(compileError(kModule, "cuda:sm_90").find("cpu targets only"),
            std::string::npos);
  EXPECT_NE(compileError(kModule, "cpu:nonsense").find("nonsense"),
            std::string::npos);
  EXPECT_NE(compileError(kModule, "cpu", "/nonexistent/ke.db")
                .find("/nonexistent/ke.db"),
            std::string::npos);
  EXPECT_NE(take(ke_compile(nullptr, 0, nullptr, nullptr, nullptr, &module)),
            "");
  EXPECT_NE(take(ke_compile("x", 1, nullptr, nullptr, nullptr, nullptr)), "");
  EXPECT_NE(take(ke_module_load("/nonexistent.kem", &module)), "");
  EXPECT_NE(take(ke_module_save(nullptr, "/tmp/x")), "");
  EXPECT_NE(take(ke_function_call(nullptr, nullptr, 0)), "");
  EXPECT_EQ(ke_module_get_num_functions(nullptr), 0u);
  EXPECT_STREQ(ke_module_get_remarks(nullptr), "");
  ke_module_destroy(nullptr);
  ke_message_free(nullptr);
}

} // namespace
