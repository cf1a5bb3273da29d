# json.awk: read a JSON file into a flat array (load with -f before a program).
#
#   json_load(FILE, J)  fills J["nodes.0.hostname"] = "vm", J["nodes.0.gpus.#"] = 1, ...
#
# Object members are joined with '.', array elements by index, and every array's
# length is stored under "PATH.#". Strings are unescaped (\uXXXX above ASCII becomes
# '?'); true, false and null are stored as those words, numbers as written.
# Returns 0, or -1 with JSON_ERROR set when the text is not JSON.

function json_load(file, J,    line, rc) {
	delete J
	JSON_TEXT = ""
	while ((rc = (getline line < file)) > 0)
		JSON_TEXT = JSON_TEXT line "\n"
	close(file)
	if (rc < 0) { JSON_ERROR = "cannot read " file; return -1 }
	JSON_POS = 1
	JSON_LEN = length(JSON_TEXT)
	JSON_ERROR = ""
	if (json_value("", J) < 0)
		return -1
	json_ws()
	if (JSON_POS <= JSON_LEN)
		return json_fail("text after the JSON value")
	return 0
}

function json_fail(msg) {
	if (JSON_ERROR == "")
		JSON_ERROR = msg " at character " JSON_POS
	return -1
}

function json_ws() {
	while (JSON_POS <= JSON_LEN && index(" \t\r\n", substr(JSON_TEXT, JSON_POS, 1)))
		JSON_POS++
}

function json_join(path, key) {
	return path == "" ? key : path "." key
}

function json_value(path, J,    c, n, key, s, m) {
	json_ws()
	c = substr(JSON_TEXT, JSON_POS, 1)
	if (c == "{") {
		JSON_POS++
		json_ws()
		if (substr(JSON_TEXT, JSON_POS, 1) == "}") { JSON_POS++; return 0 }
		for (;;) {
			json_ws()
			if (substr(JSON_TEXT, JSON_POS, 1) != "\"")
				return json_fail("expected a member name")
			if (json_string() < 0)
				return -1
			key = JSON_STR
			json_ws()
			if (substr(JSON_TEXT, JSON_POS++, 1) != ":")
				return json_fail("expected ':'")
			if (json_value(json_join(path, key), J) < 0)
				return -1
			json_ws()
			c = substr(JSON_TEXT, JSON_POS++, 1)
			if (c == "}") return 0
			if (c != ",") return json_fail("expected ',' or '}'")
		}
	}
	if (c == "[") {
		JSON_POS++
		n = 0
		json_ws()
		if (substr(JSON_TEXT, JSON_POS, 1) == "]") { JSON_POS++; J[json_join(path, "#")] = 0; return 0 }
		for (;;) {
			if (json_value(json_join(path, n), J) < 0)
				return -1
			n++
			json_ws()
			c = substr(JSON_TEXT, JSON_POS++, 1)
			if (c == "]") { J[json_join(path, "#")] = n; return 0 }
			if (c != ",") return json_fail("expected ',' or ']'")
		}
	}
	if (c == "\"") {
		if (json_string() < 0)
			return -1
		J[path] = JSON_STR
		return 0
	}
	s = substr(JSON_TEXT, JSON_POS, 40)
	if (match(s, /^(true|false|null|-?[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?)/, m)) {
		J[path] = m[1]
		JSON_POS += length(m[1])
		return 0
	}
	return json_fail("unexpected '" c "'")
}

# A string literal at JSON_POS into JSON_STR.
function json_string(    out, c, e, rest, m) {
	out = ""
	JSON_POS++
	for (;;) {
		# Copy the run of plain characters in one step.
		rest = substr(JSON_TEXT, JSON_POS, 256)
		if (match(rest, /^[^"\\]+/)) {
			out = out substr(rest, 1, RLENGTH)
			JSON_POS += RLENGTH
			continue
		}
		c = substr(JSON_TEXT, JSON_POS, 1)
		if (c == "")
			return json_fail("unterminated string")
		JSON_POS++
		if (c == "\"")
			break
		e = substr(JSON_TEXT, JSON_POS++, 1)
		if (e == "n") out = out "\n"
		else if (e == "t") out = out "\t"
		else if (e == "r") out = out "\r"
		else if (e == "b" || e == "f") out = out " "
		else if (e == "u") {
			if (!match(substr(JSON_TEXT, JSON_POS, 4), /^[0-9A-Fa-f]{4}$/, m))
				return json_fail("bad \\u escape")
			c = strtonum("0x" substr(JSON_TEXT, JSON_POS, 4))
			out = out (c >= 32 && c < 127 ? sprintf("%c", c) : "?")
			JSON_POS += 4
		} else
			out = out e
	}
	JSON_STR = out
	return 0
}
