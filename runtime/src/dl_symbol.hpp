// dl_symbol.hpp - a symbol of a library opened with dlopen, as the runtime
// loads the CUDA driver, cuBLASLt and NCCL (none is linked).
#ifndef MODELC_RUNTIME_DL_SYMBOL_HPP
#define MODELC_RUNTIME_DL_SYMBOL_HPP

#include <dlfcn.h>

#include <string>

namespace modelc::detail {

/// Sets `fn` to `symbol` of `handle`; when it is missing, names it in
/// `missing` (the first one missing) and returns false.
template <typename Fn>
bool resolveSymbol(void *handle, const char *symbol, Fn &fn,
                   std::string &missing) {
  fn = reinterpret_cast<Fn>(::dlsym(handle, symbol));
  if (!fn && missing.empty())
    missing = symbol;
  return fn != nullptr;
}

} // namespace modelc::detail

#endif // MODELC_RUNTIME_DL_SYMBOL_HPP
