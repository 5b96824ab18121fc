# chainlint.awk -- finds the places in a test body where a failing step
# would go unnoticed, as git's t/chainlint does. The body runs under errexit
# (lib.sh), which already stops at a failing simple command; what errexit
# cannot see is
#   - a step that is not the last of an &&-chain, or is negated with "!",
#     when another statement follows it: "a && b" then "c" ignores a's
#     failure, "! grep x f" then "c" ignores the grep;
#   - a for loop: its status is its last iteration's, so every statement in
#     its body must end with "|| return 1" (or "|| exit N").
# Input: the body text. Output: one line per problem, "LINE: why: text".
# An explicit "|| true" (or ":") says a failure is expected and is allowed;
# so does "|| { ...; exit 1; }", and a command put in the background ("&").

function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }

# Whether the logical line ends with something that continues the statement.
function continues(s) {
	return s ~ /(&&|\|\||\||\\|[ \t;]then|^then|[ \t;]do|^do|^else|[ \t]else|[{(]|[ \t]in|;;)$/
}

# Whether s starts by closing the block the previous line was in.
function closes(s) {
	return s ~ /^(done|fi|esac|else|elif|then|do|;;|}|\))([ \t;&|)>]|$)/
}

# Whether s ends by saying what a failure means.
function handled(s) {
	return s ~ /\|\|[ \t]*(true|:|false|return( [0-9]+)?|exit( [0-9]+)?)[ \t;}]*$/ ||
	    s ~ /\|\|[ \t]*\{.*(exit|return)( [0-9]+)?[ \t;]*}[ \t;]*$/ ||
	    s ~ /[^&]&[ \t]*$/
}

# Removes double-quoted strings, so && inside them is not seen.
function unquote(s) {
	gsub(/\\"/, "", s)
	gsub(/"[^"]*"/, "\"\"", s)
	return s
}

BEGIN { n = 0; in_doc = 0; open_q = 0 }

{
	raw = $0
	if (in_doc) {
		t = raw
		if (doc_tabs)
			sub(/^\t+/, "", t)
		if (t == doc_end)
			in_doc = 0
		next
	}
	if (open_q) {
		cur = cur " " raw
		if (gsub(/"/, "\"", raw) % 2 == 1) {
			open_q = 0
			finish_line()
		}
		next
	}
	line = trim(raw)
	if (line == "" || line ~ /^#/)
		next
	cur = line
	curno = NR
	if (gsub(/"/, "\"", line) % 2 == 1) {
		open_q = 1
		next
	}
	finish_line()
}

# A whole logical line is in cur: record it, then skip a heredoc body.
function finish_line(   m) {
	n++
	L[n] = unquote(cur)
	LNO[n] = curno
	TXT[n] = cur
	if (match(L[n], /<<-?[ \t]*['"\\]?[A-Za-z_][A-Za-z_0-9]*/)) {
		m = substr(L[n], RSTART, RLENGTH)
		doc_tabs = (m ~ /^<<-/)
		sub(/^<<-?[ \t]*['"\\]?/, "", m)
		doc_end = m
		in_doc = 1
	}
}

END {
	stmt_chained = 0
	for (i = 1; i <= n; i++) {
		s = L[i]
		nxt = (i < n) ? L[i + 1] : ""
		# A for loop's body: every statement must say what failing means.
		if (s ~ /^for[ \t]/) {
			loop[++depth] = 1
			if (s ~ /;[ \t]*do[ \t]/ && s ~ /done/ && !handled_inside(s))
				bad(i, "a for loop checks only its last iteration: end each statement in it with || return 1")
			if (s ~ /;[ \t]*do[ \t]/ && s ~ /done/)
				depth--
		} else if (s ~ /^(while|until|if|case)[ \t]/ || s ~ /^[{(]$/) {
			loop[++depth] = 0
			if (s ~ /(^|[ \t;])(fi|done|esac)([ \t;&|>)]|$)/)
				depth--		/* opened and closed on one line */
		}
		if (s ~ /^(done|fi|esac|}|\))([ \t;&|)>]|$)/ && depth > 0)
			depth--
		if (depth > 0 && loop[depth] && !continues(s) && !closes(s) &&
		    s !~ /^for[ \t]/ && !handled(s) && !harmless(s))
			bad(i, "a for loop checks only its last iteration: end each statement in it with || return 1")
		if (continues(s)) {
			if (s ~ /(&&|\|\|)$/)
				stmt_chained = 1
			if (s ~ /^!/)
				stmt_neg = 1
			continue
		}
		chained = stmt_chained || s ~ /&&/
		neg = stmt_neg || s ~ /^!/
		stmt_chained = 0
		stmt_neg = 0
		if (i == n || closes(nxt) || handled(s))
			continue
		if (chained)
			bad(i, "broken &&-chain: a failure before this point is ignored")
		else if (neg)
			bad(i, "a negated step that is not the last is never checked: chain it with &&")
	}
}

# Statements that cannot fail: assignments, loop control, a one-line case.
function harmless(s) {
	return s ~ /^[A-Za-z_][A-Za-z_0-9]*=[^ ;&|]*;?$/ ||
	    s ~ /^(continue|break)( [0-9]+)?;?$/ || s ~ /^case .*esac;?$/
}

function handled_inside(s) {
	return s ~ /\|\|[ \t]*({.*)?(return|exit|true|:)/ || s ~ /do[ \t][^;]*[^&]&[ \t]*;?[ \t]*done/
}

function bad(i, why) {
	printf "%d: %s: %s\n", LNO[i], why, TXT[i]
	found = 1
}
