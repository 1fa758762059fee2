# bash completion for chatsh(1)

_chatsh_rooms() {
  # Rooms known to the broker, if one answers quickly.
  chatsh ${socket:+--socket "$socket"} rooms 2>/dev/null | cut -f1
}

_chatsh() {
  local cur prev words cword
  _init_completion -n '#@' 2>/dev/null || {
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD - 1]}
    words=("${COMP_WORDS[@]}")
    cword=$COMP_CWORD
  }

  # The commands and options of chatsh --help (Usage.swift); a test
  # compares them, so add one there and here together.
  local commands="say history search thread tail scheduled cancel react unreact amend rooms who web"
  local command="" command_at=0 socket="" i
  for ((i = 1; i < cword; i++)); do
    case ${words[i]} in
      --socket | -s) socket=${words[i + 1]} ;;
      say | history | search | thread | tail | scheduled | cancel | react | unreact | amend | rooms | who | web)
        [[ -z $command ]] && command=${words[i]} command_at=$i ;;
    esac
  done

  case $prev in
    --socket | -s)
      compopt -o filenames 2>/dev/null
      COMPREPLY=($(compgen -f -- "$cur"))
      return ;;
    --color | --colour)
      COMPREPLY=($(compgen -W "auto always never" -- "$cur"))
      return ;;
    --trust-user)
      COMPREPLY=($(compgen -u -- "$cur"))
      return ;;
    --room)
      if [[ $cur == '@'* ]]; then
        COMPREPLY=($(compgen -P @ -u -- "${cur#@}"))
      else
        COMPREPLY=($(compgen -W "$(_chatsh_rooms)" -- "$cur"))
      fi
      return ;;
    -n | --count | --at | --wait | --reply)
      return ;;
    --every)
      COMPREPLY=($(compgen -W "daily@ weekdays@ weekends@" -- "$cur"))
      compopt -o nospace 2>/dev/null
      return ;;
  esac

  if [[ $cur == -* ]]; then
    local options="--socket --trust-user --color --help"
    case $command in
      "") options+=" --version" ;;
      say) options+=" --wait --block --notice --reply --at --every" ;;
      history | thread) options+=" -n --json" ;;
      search) options+=" -n --json --room" ;;
      tail) options+=" -n --json --mentions" ;;
      scheduled | rooms | who) options+=" --json" ;;
      web) options+=" --revoke" ;;
    esac
    COMPREPLY=($(compgen -W "$options" -- "$cur"))
    return
  fi

  case $command in
    "")
      if [[ $cur == '#'* ]]; then
        COMPREPLY=($(compgen -W "$(_chatsh_rooms)" -- "$cur"))
      else
        COMPREPLY=($(compgen -W "$commands" -- "$cur"))
      fi ;;
    react | unreact | thread | amend)
      # TARGET, then ID (and REACTION or TEXT), which only the user knows.
      if ((cword == command_at + 1)); then
        if [[ $cur == '@'* ]]; then
          COMPREPLY=($(compgen -P @ -u -- "${cur#@}"))
        else
          COMPREPLY=($(compgen -W "$(_chatsh_rooms)" -- "$cur"))
        fi
      fi ;;
    say | history | tail | who)
      if [[ $cur == '@'* ]]; then
        COMPREPLY=($(compgen -P @ -u -- "${cur#@}"))
      else
        COMPREPLY=($(compgen -W "$(_chatsh_rooms)" -- "$cur"))
      fi ;;
    cancel)
      COMPREPLY=($(compgen -W "$(chatsh ${socket:+--socket "$socket"} scheduled 2>/dev/null | cut -f1)" -- "$cur")) ;;
  esac
}

complete -F _chatsh chatsh
