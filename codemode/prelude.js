// The prelude of every program: it runs before the program, in the same
// runtime, and returns the helpers the Go side uses. It is a function of
// the few native functions Go gives it (each takes and returns only
// strings, numbers and plain JavaScript values).
//
//   call(name, argsJSON)  starts an inner call and returns its Promise
//   write(text)           appends to the console output
//   hit()                 ends the program: it reached its memory limit
//   names                 the tool names, as a JSON array
//   maxElems, maxChars    the largest array and string a built-in may make
//   maxDepth              the deepest nesting a recursive built-in may meet
//
// Everything the helpers use is taken here, before the program runs, so a
// program that replaces a built-in (JSON.stringify, Reflect.apply,
// Function.prototype.call) changes only its own code, never the helpers
// or the guards.
(function (call, write, hit, namesJSON, maxElems, maxChars, maxDepth) {
	"use strict";
	const G = globalThis;
	const apply = Reflect.apply;
	const construct = Reflect.construct;
	const stringify = JSON.stringify;
	const parse = JSON.parse;
	const isArray = Array.isArray;
	const StringC = String;
	const NumberC = Number;
	const ErrorC = Error;
	const TypeErrorC = TypeError;
	const RangeErrorC = RangeError;
	const floor = Math.floor;
	const getProto = Object.getPrototypeOf;
	const getOwnDesc = Object.getOwnPropertyDescriptor;
	const defineProp = Object.defineProperty;
	const ownNames = Object.getOwnPropertyNames;
	const freeze = Object.freeze;
	const create = Object.create;
	const keys = Object.keys;
	const setProto = Object.setPrototypeOf;

	// Built-ins that would let a program make a huge buffer in one step,
	// or a length no guard sees, are not offered.
	for (const name of ["ArrayBuffer", "SharedArrayBuffer", "DataView", "Int8Array", "Uint8Array",
		"Uint8ClampedArray", "Int16Array", "Uint16Array", "Int32Array", "Uint32Array", "Float32Array",
		"Float64Array", "BigInt64Array", "BigUint64Array", "Proxy", "WeakRef", "FinalizationRegistry", "GoError"]) {
		delete G[name];
	}

	// toLength is ToLength of the specification, done once, so that a
	// built-in is given the number the guard checked.
	function toLength(v) {
		let n = NumberC(v);
		if (!(n > 0)) return 0;
		if (n === Infinity) return 2 ** 53 - 1;
		return floor(n);
	}
	// lengthOf is the length of an array-like this. It refuses an object
	// whose length is a getter: it could answer the guard small and the
	// built-in large.
	function lengthOf(o) {
		if (o === null || o === undefined) return 0;
		if (typeof o !== "object" && typeof o !== "function") return toLength(o.length);
		if (!isArray(o)) {
			for (let p = o; p !== null; p = getProto(p)) {
				const d = getOwnDesc(p, "length");
				if (d !== undefined) {
					if (d.get !== undefined || d.set !== undefined) {
						throw new TypeErrorC("code mode: array methods do not take an object whose length is a getter");
					}
					break;
				}
			}
		}
		return toLength(o.length);
	}
	// hit interrupts the program at its next instruction; the throw is
	// in case it did not.
	function checkElems(n) {
		if (n > maxElems) {
			hit();
			throw new ErrorC("memory limit");
		}
	}
	function checkChars(n) {
		if (n > maxChars) {
			hit();
			throw new ErrorC("memory limit");
		}
	}

	// guard replaces obj[name] with a function that runs check on the
	// arguments and this before the built-in; check returns the arguments
	// to pass on, converted once.
	function guard(obj, name, check) {
		const orig = obj[name];
		const w = {
			[name](...args) {
				return apply(orig, this, check(this, args));
			},
		}[name];
		defineProp(obj, name, { value: w, writable: true, configurable: true, enumerable: false });
	}

	// Strings: the results that grow with a count.
	guard(StringC.prototype, "repeat", (s, args) => {
		const n = NumberC(args[0]);
		if (n > 0 && n !== Infinity) checkChars(StringC(s).length * floor(n));
		return [n];
	});
	for (const name of ["padStart", "padEnd"]) {
		guard(StringC.prototype, name, (s, args) => {
			const n = toLength(args[0]);
			checkChars(n);
			return args.length > 1 ? [n, args[1] === undefined ? undefined : StringC(args[1])] : [n];
		});
	}
	for (const name of ["replace", "replaceAll"]) {
		guard(StringC.prototype, name, (s, args) => {
			if (typeof args[1] === "string" || (args[1] !== null && typeof args[1] === "object")) {
				const r = StringC(args[1]);
				checkChars(2 * (StringC(s).length + 1) * r.length);
				return [args[0], r];
			}
			return args;
		});
	}
	guard(StringC, "raw", (_, args) => {
		const t = args[0];
		if (t !== null && t !== undefined) checkElems(arrayLike(t.raw));
		return args;
	});
	// split: the count of pieces is not known in advance, so the split is
	// cut just past maxElems pieces (its limit argument) and checked.
	{
		const split = StringC.prototype.split;
		defineProp(StringC.prototype, "split", {
			value: function split_(sep, limit) {
				const lim = limit === undefined ? 4294967295 : NumberC(limit) >>> 0;
				const r = apply(split, this, [sep, lim > maxElems ? maxElems + 1 : lim]);
				if (isArray(r)) checkElems(r.length);
				return r;
			},
			writable: true, configurable: true, enumerable: false,
		});
		defineProp(StringC.prototype.split, "name", { value: "split" });
	}
	guard(StringC.prototype, "concat", (s, args) => {
		const parts = [];
		let n = StringC(s).length;
		for (const a of args) {
			const p = StringC(a);
			n += p.length;
			parts.push(p);
		}
		checkChars(n);
		return parts;
	});

	// Arrays: every method loops over this.length in native code, where
	// no interrupt reaches it, so the length is checked first.
	function stringsSize(a, n, sep) {
		let total = n > 0 ? (n - 1) * sep : 0;
		for (let i = 0; i < n && total <= maxChars; i++) {
			const v = a[i];
			total += typeof v === "string" ? v.length : 24;
		}
		return total;
	}
	const arrayProto = Array.prototype;
	for (const name of ownNames(arrayProto)) {
		const d = getOwnDesc(arrayProto, name);
		// push and pop do not loop over the length, and are the hot ones.
		if (name === "constructor" || name === "push" || name === "pop" || typeof d.value !== "function") continue;
		guard(arrayProto, name, (a, args) => {
			const n = lengthOf(a);
			checkElems(n);
			switch (name) {
				case "join": {
					const sep = args[0] === undefined ? "," : StringC(args[0]);
					checkChars(stringsSize(a, n, sep.length));
					return [sep];
				}
				case "toString":
				case "toLocaleString":
					checkChars(stringsSize(a, n, 1));
					break;
				case "concat": {
					let total = n;
					for (const x of args) total += isArray(x) ? lengthOf(x) : 1;
					checkElems(total);
					break;
				}
				case "flat":
				case "flatMap": {
					let total = 0;
					for (let i = 0; i < n && total <= maxElems; i++) {
						const x = a[i];
						total += isArray(x) ? lengthOf(x) : 1;
					}
					checkElems(total);
					if (name === "flat" && args[0] !== undefined && NumberC(args[0]) > 1) checkNesting(a);
					break;
				}
			}
			return args;
		});
	}
	// Spread, for-of, Array.from, new Set(a) and the like take an array's
	// iterator: the wrapped values checks the length first.
	defineProp(arrayProto, Symbol.iterator, { value: arrayProto.values, writable: true, configurable: true, enumerable: false });
	// checkNesting throws when arrays nest in a deeper than maxDepth:
	// flat recurses natively, on the Go stack, where no limit reaches.
	function checkNesting(a) {
		const stack = [a, 0];
		setProto(stack, null);
		let top = 2;
		let steps = 0;
		while (top > 0 && steps++ <= maxElems) {
			const d = stack[--top];
			const x = stack[--top];
			if (d > maxDepth) throw new RangeErrorC("code mode: arrays nested deeper than " + maxDepth + " levels");
			const n = x.length;
			for (let i = 0; i < n; i++) {
				if (isArray(x[i])) {
					stack[top++] = x[i];
					stack[top++] = d + 1;
				}
			}
		}
	}
	function arrayLike(x) {
		if (x === null || x === undefined) return 0;
		if (typeof x === "string") return x.length;
		return lengthOf(x);
	}
	guard(Array, "from", (_, args) => {
		const x = args[0];
		if (x !== null && x !== undefined && typeof x[Symbol.iterator] !== "function") checkElems(arrayLike(x));
		return args;
	});
	// new Array(n) and Array(n): the constructor is replaced by one that
	// checks n; Array.prototype.constructor and Array.isArray keep working.
	{
		const ArrayC = Array;
		const A = function Array(...args) {
			if (args.length === 1 && typeof args[0] === "number") checkElems(args[0]);
			return construct(ArrayC, args, new.target === undefined ? ArrayC : new.target);
		};
		for (const name of ownNames(ArrayC)) {
			if (name === "length" || name === "name" || name === "prototype") continue;
			defineProp(A, name, getOwnDesc(ArrayC, name));
		}
		defineProp(A, "prototype", { value: arrayProto });
		defineProp(arrayProto, "constructor", { value: A, writable: true, configurable: true, enumerable: false });
		defineProp(G, "Array", { value: A, writable: true, configurable: true, enumerable: false });
	}
	// Calls whose arguments come from an array-like.
	guard(Function.prototype, "apply", (_, args) => {
		checkElems(arrayLike(args[1]));
		return args;
	});
	guard(Reflect, "apply", (_, args) => {
		checkElems(arrayLike(args[2]));
		return args;
	});
	guard(Reflect, "construct", (_, args) => {
		checkElems(arrayLike(args[1]));
		return args;
	});

	// JSON.stringify builds its text in native code: the value is sized in
	// JavaScript first, where an interrupt reaches.
	function sized(v, budget) {
		let total = 0;
		const stack = [v, 0];
		setProto(stack, null); // no setter the program put on Array.prototype runs here
		let top = 2;
		let steps = 0;
		while (top > 0 && total <= budget) {
			const d = stack[--top];
			const x = stack[--top];
			steps++;
			if (typeof x === "string") total += x.length + 2;
			else if (x === null || typeof x !== "object") total += 8;
			else if (steps > maxElems) return total; // a cycle or a very wide value: stringify decides
			else if (d > maxDepth) throw new RangeErrorC("code mode: a value nested deeper than " + maxDepth + " levels cannot be made JSON");
			else if (isArray(x)) {
				const n = x.length;
				checkElems(n);
				total += n + 2;
				for (let i = 0; i < n && total <= budget; i++) {
					stack[top++] = x[i];
					stack[top++] = d + 1;
				}
			} else {
				const ks = keys(x);
				for (let i = 0; i < ks.length; i++) {
					total += ks[i].length + 4;
					stack[top++] = x[ks[i]];
					stack[top++] = d + 1;
				}
			}
		}
		return total;
	}
	function safeStringify(v, replacer, space) {
		checkChars(sized(v, maxChars + 1) * (space ? 2 : 1));
		return apply(stringify, undefined, [v, replacer, space]);
	}
	const jsonObj = JSON;
	defineProp(jsonObj, "stringify", {
		value: function stringify(v, replacer, space) { return safeStringify(v, replacer, space); },
		writable: true, configurable: true, enumerable: false,
	});

	// The errors a tool call rejects with.
	class ToolError extends ErrorC {
		constructor(tool, kind, message) {
			super(message);
			this.name = "ToolError";
			this.tool = tool;
			this.kind = kind;
		}
	}

	// console: each call is one line; strings as they are, other values as
	// JSON.
	function show1(v) {
		if (typeof v === "string") return v;
		if (v instanceof ErrorC) return StringC(v.stack || v);
		if (v === undefined || typeof v === "function" || typeof v === "symbol" || typeof v === "bigint") return StringC(v);
		try {
			const s = safeStringify(v, undefined, undefined);
			return s === undefined ? StringC(v) : s;
		} catch (e) {
			return StringC(v);
		}
	}
	function logger(prefix) {
		return function (...args) {
			let line = prefix;
			for (let i = 0; i < args.length; i++) line += (i > 0 ? " " : "") + show1(args[i]);
			write(line + "\n");
		};
	}
	const console = create(null);
	console.log = logger("");
	console.info = logger("");
	console.debug = logger("");
	console.warn = logger("[warn] ");
	console.error = logger("[error] ");
	defineProp(G, "console", { value: freeze(console), writable: true, configurable: true, enumerable: false });

	// tools: one function a tool, on an object with no prototype.
	// Each entry is a tool's name, or [name, namespace, member] for a
	// tool of an MCP server: tools[namespace][member].
	const entries = parse(namesJSON);
	const names = [];
	const tools = create(null);
	const spaces = create(null);
	for (let i = 0; i < entries.length; i++) {
		const entry = entries[i];
		const nested = typeof entry !== "string";
		const name = nested ? entry[0] : entry;
		const member = nested ? entry[2] : entry;
		const f = {
			[member](args) {
				let json = "{}";
				if (args !== undefined) {
					json = safeStringify(args, undefined, undefined);
					if (json === undefined) json = "null";
				}
				return call(name, json);
			},
		}[member];
		if (!nested) {
			tools[name] = f;
			names[names.length] = name;
			continue;
		}
		const ns = entry[1];
		if (spaces[ns] === undefined) spaces[ns] = create(null);
		spaces[ns][member] = f;
		names[names.length] = ns + "." + member;
	}
	for (const ns in spaces) tools[ns] = freeze(spaces[ns]);
	defineProp(G, "tools", { value: freeze(tools), writable: false, configurable: false, enumerable: false });

	// The helpers Go uses.
	return freeze({
		// ok decodes a JSON result.
		parse(text) { return parse(text); },
		// fail is the ToolError a failed call rejects with.
		fail(tool, kind, message) { return new ToolError(tool, kind, message); },
		// show is the return value as text, or undefined.
		show(v) {
			if (v === undefined) return undefined;
			if (typeof v === "string") return v;
			let s;
			try {
				s = safeStringify(v, undefined, 2);
			} catch (e) {
				return "[the value cannot be shown as JSON: " + StringC(e && e.message) + "]";
			}
			return s === undefined ? StringC(typeof v === "symbol" ? v.toString() : v) : s;
		},
		// describe is a thrown value as text: the error's name, message
		// and the place it was thrown.
		describe(e) {
			if (e instanceof ToolError) {
				return "ToolError (" + e.kind + ") from tool " + e.tool + ": " + e.message + where(e);
			}
			if (e instanceof ErrorC) {
				return StringC(e.name) + ": " + StringC(e.message) + noTool(e) + where(e);
			}
			return "the program threw a value that is not an Error: " + show1(e);
		},
	});

	// noTool is a hint for a call of a tool that does not exist, which the
	// interpreter reports as a TypeError about a missing member.
	function noTool(e) {
		if (!(e instanceof TypeErrorC)) return "";
		const msg = StringC(e.message);
		const prefix = "Object has no member '";
		if (msg.indexOf(prefix) !== 0) return "";
		const name = msg.slice(prefix.length, -1);
		if (names.indexOf(name) >= 0) return "";
		let list = names.slice(0, 30).join(", ");
		if (names.length > 30) list += ", …";
		return " (if it is a tool: there is no tool named " + name + "; the tools are " + (list || "none") + ")";
	}
	function where(e) {
		const st = StringC(e.stack || "");
		const lines = st.split("\n");
		for (const l of lines) {
			const t = l.trim();
			if (t.startsWith("at ") && t.includes("program.js:")) return "\n    " + t;
		}
		return "";
	}
})
