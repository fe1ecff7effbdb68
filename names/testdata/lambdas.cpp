// Source of the symbols in cxx.txt under "lambdas.cpp": lambdas, operators,
// local classes, clones and templates as g++ mangles them. Not built by the
// tests: cxx.txt holds the symbols, from g++ -std=c++20 at -O0 and -O2.
#include <algorithm>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace app {
struct Point {
  int x, y;
  bool operator<(const Point& o) const { return x < o.x; }
  Point operator+(const Point& o) const { return {x + o.x, y + o.y}; }
  explicit operator bool() const { return x || y; }
  int operator()(int a) const { return a + x; }
  int& operator[](int i) { return i ? y : x; }
};
template <typename T> struct Box {
  T v;
  T get() const { return v; }
  template <typename U> U as() const { return U(v); }
  static Box make(T t) { return Box{t}; }
};
__attribute__((noinline)) int run(std::vector<int>& v) {
  auto inc = [](int x) { return x + 1; };
  auto dbl = [](int x) { return x * 2; };
  std::transform(v.begin(), v.end(), v.begin(), inc);
  std::transform(v.begin(), v.end(), v.begin(), dbl);
  std::function<int(int)> f = [&v](int a) { return a + (int)v.size(); };
  std::sort(v.begin(), v.end(), [](int a, int b) { return a > b; });
  std::map<std::string, std::vector<Point>> m;
  m["a"].push_back(Point{1, 2});
  auto p = std::make_shared<Box<std::string>>(Box<std::string>{"x"});
  Point q = Point{1, 2} + Point{3, 4};
  return f(1) + (int)m.size() + (int)p->get().size() + Box<double>::make(2.5).as<int>() + (q ? q(1) : 0) + q[1];
}
struct Widget {
  virtual ~Widget() {}
  virtual void draw() const& {}
  Widget& operator=(Widget&&) noexcept = default;
};
struct Meters { long double v; };
Meters operator""_m(long double v) { return Meters{v}; }
struct Member { int f; };
struct Ptr {
  Member* m;
  Member* operator->() const { return m; }
  int operator->*(int Member::*p) const { return m->*p; }
  static void* operator new[](unsigned long n) { return ::operator new(n); }
  static void operator delete[](void* p) { ::operator delete(p); }
  auto operator<=>(const Ptr&) const = default;
};
template <typename T> int (*pick(T))(int) { return [](int a) { return a; }; }
__attribute__((noinline)) int counter() {
  static struct Local { int n; int bump() { return ++n; } } l{0};
  return l.bump();
}
template <typename F> __attribute__((noinline)) int call(F f) { return f(1); }
__attribute__((noinline)) int generic_lambdas() {
  auto g = [](auto x) { return x + 1; };
  int k = 2;
  return call([k](int a) { return a * k; }) + call([&k](int a) { return a + k; }) + g(1) + (int)g(2.0);
}
__attribute__((noinline, cold)) void fail(const char* why) { throw std::runtime_error(why); }
__attribute__((noinline)) int checked(int x) { if (x < 0) fail("negative"); return x * 2; }
thread_local std::string tls_name = "x";
}  // namespace app

namespace {
struct Hidden { int v; int get() const { return v; } };
__attribute__((noinline)) int hidden_fn(int x) { Hidden h{x}; return h.get(); }
}  // namespace

template <typename T> T twice(T t) { return t + t; }
std::ostream& operator<<(std::ostream& o, const app::Point& p) { return o << p.x; }

int more() {
  using app::operator""_m;
  app::Member mm{3};
  app::Ptr* arr = new app::Ptr[2]{{&mm}, {&mm}};
  int r = arr[0]->f + (arr[1]->*(&app::Member::f));
  delete[] arr;
  return r + hidden_fn(1) + (int)(1.5_m).v + app::pick(1)(2) + app::counter() + app::generic_lambdas() +
         app::checked(4) + (int)app::tls_name.size() + (app::Ptr{&mm} < app::Ptr{&mm});
}

int main() {
  std::vector<int> v{3, 1, 2};
  app::Widget w;
  w.draw();
  std::cout << app::Point{1, 2} << twice<long>(2) << twice(std::string("a"));
  int (*fp)(std::vector<int>&) = app::run;
  return fp(v) + more() > 1000;
}
