/* `cwork completion bash|zsh`: a completion script made from the option tables (opt.h),
 * so that it offers exactly the commands, actions, options and option values the
 * parsers take. zsh runs the bash function through bashcompinit. */
#include "opt.h"

#include <string.h>

/* The words of a table: every option's spellings, with dashes (not those accepted but
 * not listed, such as the demo's --go-flavor, which only says it does not apply). */
static void print_option_words(const cli_command *spec)
{
    const char *sep = "";
    for (const cli_opt *o = spec->opts; o->name; o++) {
        if ((o->flags & CLI_OPT_HEADING) || (!o->help && o->set)) continue;
        printf("%s--%s", sep, o->name);
        sep = " ";
        if (o->alias && strlen(o->alias) > 1) printf(" --%s", o->alias);
    }
}

/* One case arm a command: its options, its actions and what each option's value is. */
static void print_command_case(const cli_command_entry *e)
{
    const cli_command *spec = e->spec;
    printf("    %s)\n        opts=\"", e->name);
    if (spec) print_option_words(spec);
    printf("\"\n        subs=\"");
    for (size_t i = 0; spec && spec->subs && spec->subs[i]; i++)
        printf("%s%s", i ? " " : "", spec->subs[i]);
    printf("\"\n        case \"$prev\" in\n");
    for (const cli_opt *o = spec ? spec->opts : NULL; o && o->name; o++) {
        if (o->arg != CLI_ARG_REQUIRED) continue;
        printf("        --%s", o->name);
        if (o->alias && strlen(o->alias) > 1) printf("|--%s", o->alias);
        if (o->values)
            printf(") COMPREPLY=($(compgen -W \"%s\" -- \"$cur\")); return ;;\n", o->values);
        else if (o->flags & CLI_OPT_FILE)
            printf(") COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n");
        else
            printf(") COMPREPLY=(); return ;;\n");
    }
    printf("        esac\n        ;;\n");
}

static void print_bash(void)
{
    printf("# bash completion for cwork (made by `cwork completion bash` from its option "
           "tables)\n"
           "_cwork() {\n"
           "    local cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"\" opts=\"\" subs=\"\"\n"
           "    [ \"$COMP_CWORD\" -gt 0 ] && prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
           "    if [ \"$COMP_CWORD\" -le 1 ]; then\n"
           "        COMPREPLY=($(compgen -W \"");
    const char *sep = "";
    for (size_t i = 0; i < cli_ncommands; i++) {
        if (!cli_commands[i].summary) continue;
        printf("%s%s", sep, cli_commands[i].name);
        sep = " ";
    }
    printf(" help --help --version\" -- \"$cur\"))\n"
           "        return\n"
           "    fi\n"
           "    case \"${COMP_WORDS[1]}\" in\n");
    for (size_t i = 0; i < cli_ncommands; i++) /* completion's own arm follows */
        if (cli_commands[i].summary && strcmp(cli_commands[i].name, "completion") != 0)
            print_command_case(&cli_commands[i]);
    printf("    completion) subs=\"bash zsh\" ;;\n"
           "    esac\n"
           "    if [[ \"$cur\" == -* ]]; then\n"
           "        COMPREPLY=($(compgen -W \"$opts --help\" -- \"$cur\"))\n"
           "    elif [ \"$COMP_CWORD\" -eq 2 ] && [ -n \"$subs\" ]; then\n"
           "        COMPREPLY=($(compgen -W \"$subs\" -- \"$cur\"))\n"
           "    else\n"
           "        COMPREPLY=()\n"
           "    fi\n"
           "}\n"
           "complete -F _cwork cwork\n");
}

int cmd_completion(int argc, char **argv)
{
    static const char usage[] =
        "Usage: cwork completion bash|zsh\n"
        "\n"
        "Prints a completion script for the shell: commands, actions, options and the\n"
        "values of options that take one of a few words. Load it with\n"
        "  source <(cwork completion bash)     (in ~/.bashrc)\n"
        "  source <(cwork completion zsh)      (in ~/.zshrc, after compinit)\n"
        "\n"
        "Exit status: 0, 2 for a bad command line.\n";
    if (argc == 3 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))) {
        fputs(usage, stdout);
        return CLI_OK;
    }
    if (argc != 3 || (strcmp(argv[2], "bash") != 0 && strcmp(argv[2], "zsh") != 0)) {
        fprintf(stderr, "cwork completion: give the shell, bash or zsh (see cwork completion "
                        "--help)\n");
        return CLI_USAGE;
    }
    if (!strcmp(argv[2], "zsh"))
        printf("# zsh completion for cwork: the bash completion through bashcompinit\n"
               "(( $+functions[compdef] )) || { autoload -U +X compinit && compinit }\n"
               "autoload -U +X bashcompinit && bashcompinit\n");
    print_bash();
    return fflush(stdout) == 0 ? CLI_OK : CLI_FAILURE;
}
