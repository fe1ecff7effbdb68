/* The Lua interpreter linked from Debian's liblua5.4.a (liblua5.4-dev),
 * as a program whose own module is the interpreter: `luadriver FILE
 * [ARGS]` runs FILE with ARGS in `arg`. The fidelity rows of make bench
 * (bench/fidelity.go) profile it running lua/cpu.lua. */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>

int main(int argc, char **argv) {
	if (argc < 2) {
		fprintf(stderr, "usage: luadriver FILE [ARGS]\n");
		return 2;
	}
	lua_State *L = luaL_newstate();
	if (L == NULL) {
		fprintf(stderr, "luadriver: out of memory\n");
		return 1;
	}
	luaL_openlibs(L);
	lua_createtable(L, argc - 2, 0);
	for (int i = 2; i < argc; i++) {
		lua_pushstring(L, argv[i]);
		lua_rawseti(L, -2, i - 1);
	}
	lua_setglobal(L, "arg");
	int rc = 0;
	if (luaL_dofile(L, argv[1]) != LUA_OK) {
		fprintf(stderr, "luadriver: %s\n", lua_tostring(L, -1));
		rc = 1;
	}
	lua_close(L);
	return rc;
}
