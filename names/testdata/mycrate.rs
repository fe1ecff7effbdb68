// Source of the symbols in rust.txt under "mycrate.rs": closures, generics,
// trait impls. Not built by the tests: rust.txt holds the symbols.
use std::fmt;
pub struct Foo<T> { pub x: T }
impl<T: fmt::Debug> fmt::Display for Foo<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { write!(f, "{:?}", self.x) }
}
pub trait Shape { fn area(&self) -> f64; }
pub struct Sq(pub f64);
impl Shape for Sq { #[inline(never)] fn area(&self) -> f64 { self.0 * self.0 } }
impl<T: Clone> Foo<T> { #[inline(never)] pub fn get(&self) -> T { self.x.clone() } }
#[inline(never)]
pub fn apply<F: Fn(i32) -> i32>(f: F, v: i32) -> i32 { f(v) }
#[inline(never)]
pub fn run() -> i32 {
    let a = apply(|x| x + 1, 1);
    let b = apply(|x| x * 2, 2);
    let v: Vec<u64> = (0..10).map(|i| i * 3).collect();
    let s = format!("{}", Foo { x: vec![1u8, 2] });
    let m: std::collections::HashMap<String, Vec<i32>> = std::collections::HashMap::new();
    a + b + v.len() as i32 + s.len() as i32 + m.len() as i32 + Foo{x: 3i64}.get() as i32 + Sq(2.0).area() as i32
}
pub fn main() { println!("{}", run()); }
