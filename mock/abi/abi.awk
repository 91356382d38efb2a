# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# The drop-in libraries' ABI, from its two sources: a library's .map (every
# symbol and version node, as rdma-core exports them) and its .calls table
# (what each call does on the mock). Run as
#   awk -v mode=MODE -v lib=NAME -f mock/abi/abi.awk LIB.map LIB.calls
# MODE is
#   ld      the linker's version script: each symbol in its default node
#           only, `local: *` in a node that no older version needs;
#   stubs   C for the calls the mock does not implement (each fails in its
#           own convention and says so once), and for the older versions
#           of a symbol: their own stub, or a jump to the default version;
#   table   Markdown rows "call | versions | status | note" for docs/libraries.md;
#   pairs   "LIB SYMBOL VERSION" for every pair (what the ABI check reads).
# Any disagreement between the two files is an error naming the line.
#
# A .calls line: CALL[@VERSION] CONVENTION STATUS NOTE...
#   CONVENTION  null | minus1 | positive | negative | zero | void | value |
#               eai | data | other (implemented calls only; the note says
#               what), optionally :ERRNO (the errno a stub gives; default
#               EOPNOTSUPP, what upstream gives when a provider lacks the op)
#   STATUS      impl (the mock's code defines it) | partial (defined; the
#               note says what is missing) | stub (generated: not
#               implemented)
# CALL@VERSION describes one older version; without such a line an older
# version behaves as the default one.

function fail(msg) {
	printf "%s: %s\n", where, msg > "/dev/stderr"
	failed = 1
	exit 1
}

BEGIN {
	if (mode !~ /^(ld|stubs|table|pairs)$/)
		fail("mode must be ld, stubs, table or pairs")
	conventions = "null minus1 positive negative zero void value eai data other"
	nconv = split(conventions, c, " ")
	for (i = 1; i <= nconv; i++)
		known_conv[c[i]] = 1
}

# ------------------------------------------------------------- the .map
FNR == 1 { if (++fileno == 1) map_file = FILENAME; else calls_file = FILENAME }
fileno == 1 { where = FILENAME ":" FNR }
fileno == 1 && /^[ \t]*\/\*/ { in_comment = 1 }
fileno == 1 && in_comment { if (/\*\//) in_comment = 0; next }
fileno == 1 && /^[A-Za-z][A-Za-z0-9_.]* *\{/ {
	node = $1
	sub(/\{.*/, "", node)
	if (node in node_index)
		fail("node " node " twice")
	nodes[++nnodes] = node
	node_index[node] = nnodes
	next
}
fileno == 1 && /^\}/ {
	parent = $0
	gsub(/[};[:space:]]/, "", parent)
	node_parent[node] = parent
	node = ""
	next
}
fileno == 1 && /^[ \t]*(global|local):/ {
	if ($0 ~ /local:/ && $0 !~ /local: \*;/)
		fail("only `local: *;` is understood")
	next
}
fileno == 1 && /^[ \t]*[A-Za-z_][A-Za-z0-9_]*;[ \t]*$/ {
	if (node == "")
		fail("a symbol outside a version node")
	sym = $1
	sub(/;/, "", sym)
	if ((sym, node) in pair)
		fail(sym " twice in " node)
	pair[sym, node] = 1
	if (!(sym in sym_nodes)) {
		syms[++nsyms] = sym
		sym_nodes[sym] = ""
	}
	sym_nodes[sym] = sym_nodes[sym] " " node
	default_node[sym] = node # the last node listing it
	next
}
fileno == 1 && /^[ \t]*$/ { next }
fileno == 1 { fail("cannot read this line") }

# ------------------------------------------------------------- the .calls
fileno == 2 { where = FILENAME ":" FNR }
fileno == 2 && (/^[ \t]*#/ || /^[ \t]*$/) { next }
fileno == 2 {
	call = $1
	conv = $2
	status = $3
	note = $0
	sub(/^[ \t]*[^ \t]+[ \t]+[^ \t]+[ \t]+[^ \t]+[ \t]*/, "", note)
	err = "EOPNOTSUPP"
	if (conv ~ /:/) {
		err = conv
		sub(/^[^:]*:/, "", err)
		sub(/:.*/, "", conv)
	}
	if (!(conv in known_conv))
		fail("convention '" conv "' is not one of: " conventions)
	if (status !~ /^(impl|partial|stub)$/)
		fail("status '" status "' is not impl, partial or stub")
	if (status == "stub" && (conv == "value" || conv == "data" || conv == "other"))
		fail(call ": a stub needs a plain convention, not " conv "; implement the call")
	if (conv == "other" && note == "")
		fail(call ": convention other, but the note does not say what it is")
	if (status == "partial" && note == "")
		fail(call ": partial, but the note does not say what is missing")
	sym = call
	ver = ""
	if (call ~ /@/) {
		ver = call
		sub(/^[^@]*@/, "", ver)
		sub(/@.*/, "", sym)
		if (!((sym, ver) in pair))
			fail(call ": no such pair in the .map")
		if (ver == default_node[sym])
			fail(call ": " ver " is the default version; describe it without @")
	} else if (!(sym in sym_nodes)) {
		fail(call ": not in the .map")
	}
	if (call in seen_call)
		fail(call " twice")
	seen_call[call] = 1
	conv_of[call] = conv
	err_of[call] = err
	status_of[call] = status
	note_of[call] = note
	line_of[call] = where
	next
}

# ------------------------------------------------------------- output
function versions(sym,    n, v, i, out) {
	n = split(sym_nodes[sym], v, " ")
	out = ""
	for (i = 1; i <= n; i++)
		out = out (i > 1 ? ", " : "") v[i]
	return out
}

function stub(fn, name, conv, err) {
	if (conv == "null")
		printf "STUB_NULL(%s, \"%s\", %s)\n", fn, name, err
	else if (conv == "minus1" || conv == "eai")
		printf "STUB_MINUS1(%s, \"%s\", %s)\n", fn, name, err
	else if (conv == "positive")
		printf "STUB_POSITIVE(%s, \"%s\", %s)\n", fn, name, err
	else if (conv == "negative")
		printf "STUB_NEGATIVE(%s, \"%s\", %s)\n", fn, name, err
	else if (conv == "zero")
		printf "STUB_ZERO(%s, \"%s\")\n", fn, name
	else if (conv == "void")
		printf "STUB_VOID(%s, \"%s\")\n", fn, name
	else
		fail(name ": no stub for convention " conv)
}

function emit_ld(    i, j, n, v, sym, local_node, listed) {
	# `local: *` makes a node's unlisted names local, and that would hide
	# an older version bound to that node; put it where none is.
	for (i = 1; i <= nnodes && local_node == ""; i++) {
		listed = 0
		for (j = 1; j <= nsyms; j++)
			if ((syms[j], nodes[i]) in pair && default_node[syms[j]] != nodes[i])
				listed = 1
		if (!listed)
			local_node = nodes[i]
	}
	if (local_node == "")
		fail("every node holds an older version; nowhere to put local: *")
	printf "/* Generated from %s by mock/abi/abi.awk: do not edit. */\n", map_file
	for (i = 1; i <= nnodes; i++) {
		printf "%s {\n\tglobal:\n", nodes[i]
		for (j = 1; j <= nsyms; j++)
			if (default_node[syms[j]] == nodes[i])
				printf "\t\t%s;\n", syms[j]
		if (nodes[i] == local_node)
			printf "\tlocal: *;\n"
		printf "}%s;\n", node_parent[nodes[i]] == "" ? "" : " " node_parent[nodes[i]]
	}
}

function emit_stubs(    i, j, n, v, sym, call, id) {
	printf "/* Generated from %s and %s by mock/abi/abi.awk: do not edit. */\n", map_file, calls_file
	printf "#include \"abi/stub.h\"\n\n"
	for (i = 1; i <= nsyms; i++) {
		sym = syms[i]
		if (status_of[sym] == "stub")
			stub(sym, sym, conv_of[sym], err_of[sym])
		else if (conv_of[sym] == "data")
			printf "DATA(%s)\n", sym
		n = split(sym_nodes[sym], v, " ")
		for (j = 1; j <= n; j++) {
			if (v[j] == default_node[sym])
				continue
			call = sym "@" v[j]
			id = "rdmamock_v" ++nold
			if (conv_of[sym] == "data") {
				printf "DATA_VERSION(%s, %s, \"%s\")\n", id, sym, call
			} else if (call in status_of && status_of[call] == "stub") {
				stub(id, call, conv_of[call], err_of[call])
				printf "SYMVER(%s, \"%s\")\n", id, call
			} else {
				printf "ALIAS(%s, %s, \"%s\")\n", id, sym, call
			}
		}
	}
}

function md(s) {
	gsub(/\|/, "\\|", s)
	return s
}

function emit_table(    i, j, n, v, sym, call, status, note, extra) {
	for (i = 1; i <= nsyms; i++) {
		sym = syms[i]
		status = status_of[sym] == "impl" ? "yes" : status_of[sym] == "partial" ? "partly" : "no"
		note = note_of[sym]
		extra = ""
		n = split(sym_nodes[sym], v, " ")
		for (j = 1; j <= n; j++) {
			call = sym "@" v[j]
			if (call in status_of && status_of[call] == "stub")
				extra = extra (extra == "" ? "" : "; ") v[j] ": not implemented" \
					(note_of[call] == "" ? "" : " (" note_of[call] ")")
		}
		if (extra != "")
			note = note (note == "" ? "" : "; ") extra
		printf "| `%s` | %s | %s | %s |\n", sym, versions(sym), status, md(note)
	}
}

END {
	if (failed)
		exit 1
	where = calls_file
	for (i = 1; i <= nsyms; i++)
		if (!(syms[i] in status_of)) {
			where = map_file
			fail(syms[i] " has no line in " calls_file)
		}
	if (mode == "ld")
		emit_ld()
	else if (mode == "stubs")
		emit_stubs()
	else if (mode == "table")
		emit_table()
	else
		for (i = 1; i <= nsyms; i++) {
			n = split(sym_nodes[syms[i]], v, " ")
			for (j = 1; j <= n; j++)
				printf "%s %s %s\n", lib, syms[i], v[j]
		}
}
