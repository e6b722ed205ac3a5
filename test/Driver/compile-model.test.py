# Loads a GPU model library and prints its ABI version, its signature and
# what a call says (compile-model.test).
import ctypes
import sys

model = ctypes.CDLL(sys.argv[1])
model.ke_model_signature.restype = ctypes.c_char_p
model.ke_model_last_error.restype = ctypes.c_char_p
print("abi", model.ke_model_abi_version())
print(model.ke_model_signature().decode())
buffers = (ctypes.c_void_p * 4)()
status = model.ke_model_run(None, buffers)
print(f"run {status}: {model.ke_model_last_error().decode()}")
# A buffer that is not 16-byte aligned is refused before anything loads.
buffers[0] = 0x1008
status = model.ke_model_run(None, buffers)
print(f"misaligned {status}: {model.ke_model_last_error().decode()}")
buffers[0] = None
# Releasing before any call frees nothing and succeeds.
print(f"release {model.ke_model_release()}")
