// Zoom and search for a flame graph written by package flame. Every frame
// is a <g class="f"> with data-x and data-w (its offset and width in units
// of the graph's value) and data-d (its depth, 0 for "all"); the first line
// of its <title> is its name, which search matches; data-n, when present,
// is the shorter text the frame shows. fg holds the geometry.
(function () {
	"use strict";
	var frames = Array.prototype.slice.call(document.querySelectorAll("g.f"));
	if (frames.length === 0) {
		return;
	}
	var all = frames[0];
	var full = fg.width - 2 * fg.xpad;
	var unzoomBtn = document.getElementById("unzoom");
	var searchBtn = document.getElementById("search");
	var details = document.getElementById("details");
	var matched = document.getElementById("matched");
	var searching = false;

	function num(g, k) { return Number(g.getAttribute("data-" + k)); }
	function name(g) { return g.querySelector("title").textContent.split("\n")[0]; }
	function label(g) { return g.hasAttribute("data-n") ? g.getAttribute("data-n") : name(g); }

	// fit is the part of s a frame w pixels wide shows.
	function fit(s, w) {
		var n = Math.floor((w - 6) / (0.59 * fg.font));
		var cs = Array.from(s);
		if (n < 3) {
			return "";
		}
		return cs.length <= n ? s : cs.slice(0, n - 2).join("") + "..";
	}

	function place(g, x, w) {
		var r = g.querySelector("rect"), t = g.querySelector("text");
		r.setAttribute("x", x.toFixed(2));
		r.setAttribute("width", w.toFixed(2));
		t.setAttribute("x", (x + 3).toFixed(2));
		t.textContent = fit(label(g), w);
	}

	// zoom gives g the full width: its ancestors stay (full width, faded),
	// its callees widen with it, every other frame hides.
	function zoom(g) {
		var x = num(g, "x"), w = num(g, "w"), d = num(g, "d"), scale = full / w;
		frames.forEach(function (e) {
			var ex = num(e, "x"), ew = num(e, "w"), ed = num(e, "d");
			e.classList.remove("hide", "anc");
			if (ed < d && ex <= x && ex + ew >= x + w) {
				e.classList.add("anc");
				place(e, fg.xpad, full);
			} else if (ed >= d && ex >= x && ex + ew <= x + w) {
				place(e, fg.xpad + (ex - x) * scale, ew * scale);
			} else {
				e.classList.add("hide");
			}
		});
		unzoomBtn.classList.toggle("hide", g === all);
	}

	function unzoom() {
		zoom(all);
	}

	// search highlights the frames whose names match re and shows their
	// share of the graph, a match inside another counted once.
	function search(term) {
		var re;
		try {
			re = new RegExp(term);
		} catch (e) {
			matched.textContent = "bad regular expression";
			return;
		}
		var hits = [];
		frames.forEach(function (e) {
			var r = e.querySelector("rect");
			if (!r.hasAttribute("data-fill")) {
				r.setAttribute("data-fill", r.getAttribute("fill"));
			}
			if (re.test(name(e))) {
				r.setAttribute("fill", fg.hit);
				hits.push(e);
			} else {
				r.setAttribute("fill", r.getAttribute("data-fill"));
			}
		});
		hits.sort(function (a, b) { return num(a, "x") - num(b, "x") || num(a, "d") - num(b, "d"); });
		var end = -1, sum = 0;
		hits.forEach(function (e) {
			if (num(e, "x") >= end) {
				sum += num(e, "w");
				end = num(e, "x") + num(e, "w");
			}
		});
		matched.textContent = "Matched: " + (100 * sum / num(all, "w")).toFixed(2) + "%";
		searchBtn.textContent = "Reset Search";
		searching = true;
	}

	function resetSearch() {
		frames.forEach(function (e) {
			var r = e.querySelector("rect");
			if (r.hasAttribute("data-fill")) {
				r.setAttribute("fill", r.getAttribute("data-fill"));
			}
		});
		matched.textContent = " ";
		searchBtn.textContent = "Search";
		searching = false;
	}

	frames.forEach(function (g) {
		g.addEventListener("click", function () { zoom(g); });
		g.addEventListener("mouseover", function () {
			details.textContent = g.querySelector("title").textContent.split("\n").join(" · ");
		});
		g.addEventListener("mouseout", function () { details.textContent = " "; });
	});
	unzoomBtn.addEventListener("click", unzoom);
	searchBtn.addEventListener("click", function () {
		if (searching) {
			resetSearch();
			return;
		}
		var term = window.prompt("Search frames (regular expression)", "");
		if (term) {
			search(term);
		}
	});
	window.flame = {zoom: zoom, unzoom: unzoom, search: search, resetSearch: resetSearch};
})();
