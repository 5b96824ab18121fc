# funclen.awk -- prints "LINES FILE NAME" for every function defined in the
# C files given, in the house style: the name at column 0 on its own line
# ("static int\nname(args)"), the body from a "{" to a "}" at column 0.
FNR == 1 { name = ""; start = 0; inbody = 0 }
/^[A-Za-z_][A-Za-z0-9_]*\(/ && !/;[ \t]*$/ {
	name = $0
	sub(/\(.*/, "", name)
	start = FNR
}
/^\{/ && name != "" { inbody = 1 }
/^\}/ && inbody {
	print FNR - start + 1, FILENAME, name
	inbody = 0
	name = ""
}
