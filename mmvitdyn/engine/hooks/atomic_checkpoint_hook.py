"""Checkpoints that a crash cannot leave half-written."""
import os.path as osp

from mmengine.dist import is_main_process
from mmengine.fileio import LocalBackend, get_file_backend
from mmengine.hooks import CheckpointHook
from mmengine.registry import HOOKS

from ...utils import ATOMIC_BACKEND, atomic_target


@HOOKS.register_module()
class AtomicCheckpointHook(CheckpointHook):
    """``CheckpointHook`` whose files are complete or absent after a crash.

    mmengine's hook writes a checkpoint in place and removes the oldest one
    (``max_keep_ckpts``) before writing the new one, so a crash while saving
    leaves a truncated file and, with ``max_keep_ckpts=1``, no usable
    checkpoint. This hook writes local checkpoints and ``last_checkpoint``
    through a temporary file, ``fsync`` and rename
    (:func:`mmvitdyn.utils.atomic_target`), and removes outdated checkpoints
    only once the new one and ``last_checkpoint`` are in place. A failed
    save leaves the previous checkpoint and ``last_checkpoint`` as they were.

    Takes the arguments of :class:`mmengine.hooks.CheckpointHook`; remote
    ``out_dir`` s and explicit ``backend_args`` are left to mmengine.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        local = self.out_dir is None or isinstance(get_file_backend(self.out_dir), LocalBackend)
        if local and self.backend_args is None and self.file_client_args is None:
            self.backend_args = dict(backend=ATOMIC_BACKEND)

    def _remove_checkpoint(self, step: int) -> None:
        path = self.file_backend.join_path(self.out_dir, self.filename_tmpl.format(step))
        if self.file_backend.isfile(path):
            self.file_backend.remove(path)
        elif self.file_backend.isdir(path):  # checkpoints saved by DeepSpeed are directories
            self.file_backend.rmtree(path)

    def _save_checkpoint_with_step(self, runner, step: int, meta: dict) -> None:
        """Save ``step``'s checkpoint, point ``last_checkpoint`` at it, then
        remove the checkpoints beyond ``max_keep_ckpts``."""
        # The bookkeeping is updated before saving so that the checkpoint's
        # message hub lists itself (a resumed run then removes it in turn).
        outdated = []
        if self.max_keep_ckpts > 0 and not (self.keep_ckpt_ids and self.keep_ckpt_ids[-1] == step):
            if len(self.keep_ckpt_ids) == self.max_keep_ckpts:
                outdated.append(self.keep_ckpt_ids.popleft())
            self.keep_ckpt_ids.append(step)
            runner.message_hub.update_info('keep_ckpt_ids', list(self.keep_ckpt_ids))

        filename = self.filename_tmpl.format(step)
        self.last_ckpt = self.file_backend.join_path(self.out_dir, filename)
        runner.message_hub.update_info('last_ckpt', self.last_ckpt)
        runner.save_checkpoint(
            self.out_dir,
            filename,
            self.file_client_args,
            save_optimizer=self.save_optimizer,
            save_param_scheduler=self.save_param_scheduler,
            meta=meta,
            by_epoch=self.by_epoch,
            backend_args=self.backend_args,
            **self.args)
        if not is_main_process():
            return
        with atomic_target(osp.join(runner.work_dir, 'last_checkpoint')) as tmp:
            tmp.write_text(self.last_ckpt)
        for old_step in outdated:
            self._remove_checkpoint(old_step)
