func.func @f() {
  %x = foo.bar() : () -> f32
  return
}
