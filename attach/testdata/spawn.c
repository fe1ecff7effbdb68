/* vfork, posix_spawn and system(): children that share the parent's memory until they exec. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <spawn.h>
#include <sys/wait.h>
extern char **environ;
__attribute__((noinline)) int via_system(void){ return system("echo from-system"); }
__attribute__((noinline)) int via_vfork(void){ pid_t p = vfork(); if (p == 0) { execl("/bin/echo","echo","from-vfork",(char*)0); _exit(127);} int st; waitpid(p,&st,0); return st; }
__attribute__((noinline)) int via_spawn(void){ pid_t p; char *argv[]={"echo","from-spawn",0}; posix_spawn(&p,"/bin/echo",0,0,argv,environ); int st; waitpid(p,&st,0); return st; }
int main(){ via_system(); via_vfork(); via_spawn(); printf("done\n"); return 0; }
