// posix_spawn_file_actions_addclosefrom_np and _addchdir_np are GNU
// extensions that Swift's Glibc module does not declare.
#define _GNU_SOURCE
#include <signal.h>
#include <spawn.h>
#include <unistd.h>
#include "CShims.h"

int chat_spawn(pid_t *pid, const char *path, char *const argv[], char *const envp[],
               const char *directory, int input, int output, int error) {
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attributes;
  int status = posix_spawn_file_actions_init(&actions);
  if (status != 0) return status;
  status = posix_spawnattr_init(&attributes);
  if (status != 0) {
    posix_spawn_file_actions_destroy(&actions);
    return status;
  }
  int streams[3] = {input, output, error};
  for (int target = 0; target < 3 && status == 0; target++) {
    if (streams[target] >= 0)
      status = posix_spawn_file_actions_adddup2(&actions, streams[target], target);
  }
  if (status == 0) status = posix_spawn_file_actions_addclosefrom_np(&actions, 3);
  if (status == 0 && directory != NULL)
    status = posix_spawn_file_actions_addchdir_np(&actions, directory);

  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  if (status == 0) status = posix_spawnattr_setsigmask(&attributes, &none);
  if (status == 0) status = posix_spawnattr_setsigdefault(&attributes, &all);
  if (status == 0) status = posix_spawnattr_setpgroup(&attributes, 0);
  if (status == 0)
    status = posix_spawnattr_setflags(
        &attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  if (status == 0) status = posix_spawn(pid, path, &actions, &attributes, argv, envp);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  return status;
}
