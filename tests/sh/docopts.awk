# docopts.awk -- prints "OPTION value|none" for every option a man page
# or completion file offers, to compare with "dtrun --list-options"
# (t0040-docs.sh). -v kind=man|fish|zsh|bash and -v prog=dtrun|dtrun-kill.
# bash says "?" where the file does not tell whether a value follows.

function emit(o, v) { if (o ~ /^-/) print o, v }

# man: the .It lines of the first tag list after .Sh DESCRIPTION.
kind == "man" && /^\.Sh DESCRIPTION/ { sect = 1 }
kind == "man" && sect == 1 && /^\.Bl -tag/ { sect = 2; next }
kind == "man" && sect == 2 && /^\.El/ { sect = 3 }
kind == "man" && sect == 2 && /^\.It / {
	for (i = 2; i <= NF; i++)
		if ($i == "Fl") {
			v = ($(i + 2) == "Ar" || $(i + 2) == "Cm") ? "value" : "none"
			emit("-" $(i + 1), v)
		}
}

# fish: complete -c PROG -s L -l NAME -o OLD [-x|-r] [-a ...] -d ...
kind == "fish" && $1 == "complete" && $2 == "-c" && $3 == prog {
	n = 0; v = "none"
	for (i = 4; i <= NF && $i != "-a" && $i != "-d"; i++) {
		if ($i == "-s" || $i == "-o")
			names[++n] = "-" $(++i)
		else if ($i == "-l")
			names[++n] = "--" $(++i)
		else if ($i == "-x" || $i == "-r")
			v = "value"
	}
	for (i = 1; i <= n; i++)
		emit(names[i], v)
}

# zsh: the _arguments specs of function _PROG (dashes as underscores):
# '(-n --np)'{-n,--np}'[help]:ranks:' or '*--hostfile[help]:file:_files'.
kind == "zsh" && $0 ~ "^_" fn "\\(\\)" { infn = 1; next }
kind == "zsh" && infn && /^}/ { infn = 0 }
kind == "zsh" && infn && /^[ \t]*'/ {
	s = $0
	sub(/^[ \t]*/, "", s)
	sub(/^'\([^)]*\)'/, "", s)
	# Then '*' (repeatable) before braces, or ' (and * ) before a name.
	if (substr(s, 1, 3) == "'*'")
		s = substr(s, 4)
	else if (substr(s, 1, 1) == "'")
		s = substr(s, substr(s, 2, 1) == "*" ? 3 : 2)
	if (substr(s, 1, 1) == "{") {
		list = substr(s, 2, index(s, "}") - 2)
		s = substr(s, index(s, "}") + 1)
	} else {
		list = substr(s, 1, index(s, "[") - 1)
		s = substr(s, index(s, "["))
	}
	rest = substr(s, index(s, "]") + 1)
	n = split(list, names, ",")
	for (i = 1; i <= n; i++)
		emit(names[i], (rest ~ /^:/) ? "value" : "none")
}

# bash: _dtrun's opts="..." words, and the options its loop skips a value
# after; _dtrun_kill's compgen -W "..." words.
kind == "bash" && $0 ~ "^_" fn "\\(\\)" { infn = 1; next }
kind == "bash" && infn && /^}/ { infn = 0 }
kind == "bash" && infn && (/opts="/ || /compgen -W "--/) { words = 1 }
kind == "bash" && infn && words {
	s = $0
	sub(/.*(opts=|compgen -W )"/, "", s)
	if (s ~ /"/) { sub(/".*/, "", s); words = 0 }
	n = split(s, w, /[ \t]+/)
	for (i = 1; i <= n; i++)
		if (w[i] ~ /^-/)
			offered[w[i]] = 1
}
kind == "bash" && infn && /case \$\{COMP_WORDS\[i\]\} in/ { skips = 1; next }
kind == "bash" && infn && skips {
	if ($0 ~ /--\) _command_offset/)
		next
	n = split($0, w, /[|) \t\\]+/)
	for (i = 1; i <= n; i++)
		if (w[i] ~ /^-/)
			valued[w[i]] = 1
	if ($0 ~ /\(\(i\+\+\)\)/)
		skips = 0
}
END {
	if (kind == "bash")
		for (o in offered) {
			v = (o in valued) ? "value" : "none"
			print o, (fn == "dtrun_kill") ? "?" : v
		}
}
