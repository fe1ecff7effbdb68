// Package names shortens demangled C++ and Rust function names for display:
// a libstdc++ instance name can run to hundreds of characters, which makes a
// table hundreds of columns wide and a graph label unreadable.
//
// Short keeps what tells functions apart and drops the rest: parameter lists,
// cv/ref qualifiers, [abi:...] tags, clone suffixes, return types and Rust
// legacy hashes go; template and generic arguments become "<…>", unless they
// are a few integer or boolean literals ("Leaf<0, 1>", "get<2>"), which read
// as short and tell the instances apart; operators,
// conversion operators, lambdas and closures ("{lambda#1}", "{{closure}}",
// "{closure#0}") and Rust qualified paths ("<Foo as core::fmt::Display>::fmt")
// stay readable. C and Go names come back unchanged. ShortMangled does the
// same from a mangled symbol, with the demangler dropping the parameters.
//
// The full (demangled) name stays the profile's name of a function: callers
// show Short in tables and graph labels and the full name where there is
// room for it, in SVG tooltips and in JSON. A --full-names flag turns the
// shortening off. Instances of one template over types (and, since the demangler drops
// their hash, the closures of one legacy-mangled Rust function) share a
// short name, so callers key rows and nodes by function, never by Short.
package names
