-- A CPU-bound Lua workload for the fidelity rows of make bench: recursion,
-- tables, string building, sort with a Lua comparator, pcall errors and
-- coroutines, each a share of the run. `luadriver cpu.lua [ROUNDS]`
-- prints one checksum line.
local rounds = tonumber(arg[1]) or 10

local function fib(n)
  if n < 2 then return n end
  return fib(n - 1) + fib(n - 2)
end

local function tables(n)
  local t, sum = {}, 0
  for i = 1, n do t[i] = i * 3 end
  local h = {}
  for i = 1, n do h["k" .. (i % 997)] = (h["k" .. (i % 997)] or 0) + t[i] end
  for _, v in pairs(h) do sum = sum + v end
  for i = n, 1, -1 do sum = sum + (table.remove(t) or 0) % 7 end
  return sum
end

local function strings(n)
  local parts = {}
  for i = 1, n do
    parts[#parts + 1] = string.format("%d:%s", i, string.rep("x", i % 5))
  end
  local s = table.concat(parts, ",")
  local count = 0
  for w in s:gmatch("[^,]+") do count = count + #w end
  return count + #s:upper():lower()
end

local function sorting(n)
  local t, seed = {}, 42
  for i = 1, n do
    seed = (seed * 1103515245 + 12345) % 2147483648
    t[i] = {key = seed % 100000, id = i}
  end
  table.sort(t, function(a, b)
    if a.key ~= b.key then return a.key < b.key end
    return a.id < b.id
  end)
  return t[1].key + t[n].key
end

local function failing(n)
  local caught = 0
  for i = 1, n do
    local ok, err = pcall(function(x)
      if x % 3 == 0 then error({code = x}) end
      return x
    end, i)
    if not ok then caught = caught + err.code % 5 end
  end
  return caught
end

local function coroutines(n)
  local gen = coroutine.wrap(function()
    for i = 1, n do coroutine.yield(i * 2) end
  end)
  local sum = 0
  for _ = 1, n do sum = sum + gen() end
  return sum
end

local check = 0
for r = 1, rounds do
  check = (check + fib(22) + tables(20000) + strings(8000) + sorting(6000)
    + failing(6000) + coroutines(20000) + r) % 1000000007
end
print(string.format("checksum %d", check))
