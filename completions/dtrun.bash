# bash completion for dtrun and dtrun-kill
_dtrun()
{
	local cur prev opts i
	COMPREPLY=()
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD-1]}
	opts="--np --nproc-per-node --hosts --hostfile --config --template
	      --include --exclude --oversubscribe --servers --launcher --prefix
	      --output-dir --timestamp --collapse --no-collapse --escape-output --export --env-file --setup --forward-signals --kill-grace --timeout --heartbeat-timeout --start-timeout --hang-timeout --on-hang --straggler-threshold --on-straggler --max-restarts --restart-delay --restart-on-same-failure --min-np --spares --dry-run --check --preflight --deep --deep-bytes
	      --framework --store --iface --seed --role --module --no-python
	      --local-ranks-filter --redirects --tee --tag-output
	      --ssh-port --ssh-identity --ssh-option --ssh-config --ssh-jump --ssh-fanout
	      --ssh-agent-dir --sync-dst-dir --sync-exclude
	      --verbose --quiet --version --help
	      --nproc_per_node --npernode --nnodes --master-port --master_port
	      --master-addr --master_addr --max_restarts --standalone
	      --rdzv-endpoint --rdzv_endpoint --rdzv-backend --rdzv_backend
	      --rdzv-id --rdzv_id --node-rank --node_rank -np -npernode
	      --log-dir --log_dir --local_ranks_filter --no_python
	      --monitor-interval --monitor_interval
	      -n -H -f -s -x -p -i -F -J -v -q -V -h -m -r -t"
	local frameworks="pytorch tensorflow mxnet horovod mpi none"

	# After the command word, complete the command's own arguments.
	for ((i = 1; i < COMP_CWORD; i++)); do
		case ${COMP_WORDS[i]} in
		--) _command_offset $((i + 1)); return ;;
		-n|--np|--nproc-per-node|--launcher|--prefix|--output-dir|-x|--export|--env-file|--setup|--forward-signals|--kill-grace|--timeout|--heartbeat-timeout|--start-timeout|--hang-timeout|--on-hang|--straggler-threshold|--on-straggler|--max-restarts|--restart-delay|--min-np|--spares|--deep-bytes|\
		-H|--hosts|--hostfile|-f|--config|--template|--include|--exclude|-s|--servers|\
		-p|--ssh-port|-i|--ssh-identity|--ssh-option|-F|--ssh-config|-J|--ssh-jump|--ssh-fanout|--ssh-agent-dir|\
		--framework|--store|--iface|--seed|--sync-dst-dir|--sync-exclude|\
		--role|--local-ranks-filter|--local_ranks_filter|-r|--redirects|-t|--tee|--log-dir|--log_dir|--monitor-interval|--monitor_interval|\
		-np|-npernode|--nproc_per_node|--npernode|--nnodes|--master-port|--master_port|--master-addr|--master_addr|--max_restarts|\
		--rdzv-endpoint|--rdzv_endpoint|--rdzv-backend|--rdzv_backend|--rdzv-id|--rdzv_id|--node-rank|--node_rank)
			((i++)) ;;
		-*) ;;
		*) _command_offset $i; return ;;
		esac
	done

	case $prev in
	--launcher) COMPREPLY=($(compgen -W "local ssh slurm" -- "$cur")); return ;;
	--on-hang) COMPREPLY=($(compgen -W "stop report" -- "$cur")); return ;;
	--store) COMPREPLY=($(compgen -W "dtrun rank0" -- "$cur")); return ;;
	--on-straggler) COMPREPLY=($(compgen -W "report stack stop" -- "$cur")); return ;;
	--nproc-per-node|--nproc_per_node) COMPREPLY=($(compgen -W "auto gpu cpu" -- "$cur")); return ;;
	-r|--redirects|-t|--tee) COMPREPLY=($(compgen -W "0 1 2 3" -- "$cur")); return ;;
	--output-dir|--log-dir|--log_dir|--ssh-agent-dir|--sync-dst-dir) COMPREPLY=($(compgen -d -- "$cur")); return ;;
	-H|--hosts|--hostfile|-f|--config|--template|-i|--ssh-identity|-F|--ssh-config)
		COMPREPLY=($(compgen -f -- "$cur")); return ;;
	--ssh-option) COMPREPLY=($(compgen -W "User= Port= IdentityFile= StrictHostKeyChecking= UserKnownHostsFile= ConnectTimeout= ProxyJump= ProxyCommand=" -- "$cur")); return ;;
	-x|--export) COMPREPLY=($(compgen -e -- "$cur")); return ;;
	--env-file) COMPREPLY=($(compgen -f -- "$cur")); return ;;
	--setup) COMPREPLY=($(compgen -c -- "$cur")); return ;;
	--forward-signals)
		local given=${cur%"${cur##*,}"}
		COMPREPLY=($(compgen -P "$given" -W "USR1 USR2 ALRM WINCH CONT URG PWR XCPU XFSZ VTALRM PROF none" -- "${cur##*,}"))
		return ;;
	-J|--ssh-jump) COMPREPLY=($(compgen -A hostname -- "$cur")); return ;;
	--framework)
		# A comma-separated list: complete the word after the last comma.
		local given=${cur%"${cur##*,}"}
		COMPREPLY=($(compgen -P "$given" -W "$frameworks" -- "${cur##*,}"))
		return ;;
	--iface)
		# Candidates, comma-separated (HOST=IFACE too): this machine's names after the last comma or =.
		local given=${cur%"${cur##*[,=]}"}
		COMPREPLY=($(compgen -P "$given" -W "$(ls /sys/class/net 2>/dev/null)" -- "${cur##*[,=]}"))
		return ;;
	-n|--np|--role|--local-ranks-filter|--local_ranks_filter|--monitor-interval|--monitor_interval|--kill-grace|--timeout|--heartbeat-timeout|--start-timeout|--hang-timeout|--max-restarts|--restart-delay|--min-np|--spares|--prefix|--include|--exclude|-s|--servers|-p|--ssh-port|--ssh-fanout|--seed|--sync-exclude) return ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
	else
		COMPREPLY=($(compgen -c -- "$cur"))
	fi
}
complete -F _dtrun dtrun

_dtrun_kill()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}
	case $prev in
	-H|--hosts|-i|--ssh-identity|-F|--ssh-config)
		COMPREPLY=($(compgen -f -- "$cur")); return ;;
	--ssh-agent-dir) COMPREPLY=($(compgen -d -- "$cur")); return ;;
	-J|--ssh-jump) COMPREPLY=($(compgen -A hostname -- "$cur")); return ;;
	--ssh-option) COMPREPLY=($(compgen -W "User= Port= IdentityFile= StrictHostKeyChecking= UserKnownHostsFile= ConnectTimeout= ProxyJump= ProxyCommand=" -- "$cur")); return ;;
	-w|--wait|-p|--ssh-port|--ssh-fanout) return ;;
	esac
	COMPREPLY=($(compgen -W "--all --wait --quiet --stacks --help --hosts --ssh-port
	    --ssh-identity --ssh-option --ssh-config --ssh-jump --ssh-fanout --ssh-agent-dir" -- "$cur"))
}
complete -F _dtrun_kill dtrun-kill
