"""Checkpoints that a crash cannot leave half-written, stale or doubled."""
import os.path as osp
import re
from pathlib import Path
from typing import List, Optional, Tuple

from mmengine.dist import is_main_process
from mmengine.fileio import LocalBackend, get_file_backend
from mmengine.hooks import CheckpointHook
from mmengine.registry import HOOKS

from ...utils import (ATOMIC_BACKEND, WorkDirLock, WorkDirLockedError, atomic_target,
                      remove_orphaned_temporaries)

# Message hub key: the last epoch (or iteration) whose validation the best
# checkpoint logic has seen; saved with every later checkpoint.
VALIDATED_KEY = 'atomic_checkpoint_validated_step'


@HOOKS.register_module()
class AtomicCheckpointHook(CheckpointHook):
    """``CheckpointHook`` whose files are complete, current and single after a crash.

    For local folders it writes checkpoints and ``last_checkpoint`` through
    :func:`mmvitdyn.utils.atomic_target`, removes outdated and superseded best
    checkpoints only once their successors are recorded, reconciles the best
    files after a resume, and holds the work_dir and ``out_dir``
    (:class:`mmvitdyn.utils.WorkDirLock`) while training (docs/design_notes.md).

    Takes the arguments of :class:`mmengine.hooks.CheckpointHook`; remote
    ``out_dir`` s and explicit ``backend_args`` are left to mmengine.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.local = self.out_dir is None or isinstance(
            get_file_backend(self.out_dir), LocalBackend)
        if self.local and self.backend_args is None and self.file_client_args is None:
            self.backend_args = dict(backend=ATOMIC_BACKEND)
        self.folder_locks: List[WorkDirLock] = []
        self.superseded_best: List[str] = []  # removed once a checkpoint records the new best

    # ---------------------------------------------------------- training
    def before_train(self, runner) -> None:
        super().before_train(runner)  # sets out_dir and the recorded best paths
        # mmengine does not restore the path of the last checkpoint on resume
        self.last_ckpt = runner.message_hub.get_info('last_ckpt', self.last_ckpt)
        if is_main_process():
            folders = {runner.work_dir, self.out_dir} if self.local else {runner.work_dir}
            try:
                for folder in sorted(folders):  # where checkpoints go, not only the work_dir
                    self.folder_locks.append(WorkDirLock(folder))
                    self.folder_locks[-1].acquire()
            except WorkDirLockedError:
                self.folder_locks.pop()
                self._release_folders()
                raise
            for folder in sorted(folders):
                self._remove_orphans(runner, folder)
            if self.local and self.save_best is not None:
                self._reconcile_best(runner)
        if self.save_best is not None:  # every rank takes part in validation
            self._validate_resumed_step(runner)

    def after_run(self, runner) -> None:
        super().after_run(runner)
        self._release_folders()

    def _release_folders(self) -> None:
        while self.folder_locks:
            self.folder_locks.pop().release()

    def after_val_epoch(self, runner, metrics) -> None:
        runner.message_hub.update_info(VALIDATED_KEY,
                                       runner.epoch if self.by_epoch else runner.iter)
        super().after_val_epoch(runner, metrics)

    @staticmethod
    def _remove_orphans(runner, folder: str) -> None:
        if osp.isdir(folder):
            for path in remove_orphaned_temporaries(folder):
                runner.logger.info(f'removed {path}, left by a save that was killed')

    # ------------------------------------------------------ best checkpoints
    def _best_keys(self, key_indicator: str) -> Tuple[str, str]:
        """The message hub keys of a key indicator's best score and path."""
        if len(self.key_indicators) == 1:
            return 'best_score', 'best_ckpt'
        return f'best_score_{key_indicator}', f'best_ckpt_{key_indicator}'

    def _best_path(self, key_indicator: str) -> Optional[str]:
        if len(self.key_indicators) == 1:
            return self.best_ckpt_path
        return self.best_ckpt_path_dict.get(key_indicator)

    def _set_best_path(self, key_indicator: str, path: str) -> None:
        if len(self.key_indicators) == 1:
            self.best_ckpt_path = path
        else:
            self.best_ckpt_path_dict[key_indicator] = path

    def _best_name(self, key_indicator: str, step: int) -> str:
        return f'best_{key_indicator}_{self.filename_tmpl.format(step)}'.replace('/', '_')

    def _save_best_file(self, runner, name: str) -> None:
        runner.save_checkpoint(
            self.out_dir,
            filename=name,
            file_client_args=self.file_client_args,
            save_optimizer=False,
            save_param_scheduler=False,
            meta=dict(epoch=runner.epoch, iter=runner.iter),
            by_epoch=False,
            backend_args=self.backend_args)

    def _remove_path(self, path: str) -> None:
        if self.file_backend.isfile(path):
            self.file_backend.remove(path)
        elif self.file_backend.isdir(path):  # checkpoints saved by DeepSpeed are directories
            self.file_backend.rmtree(path)

    def _save_best_checkpoint(self, runner, metrics) -> None:
        """mmengine's rule for a new best, saved in the crash-safe order (docs/design_notes.md)."""
        if not self.save_best:
            return
        step = runner.epoch if self.by_epoch else runner.iter
        if 'auto' in self.key_indicators:
            self._init_rule(self.rules, [list(metrics.keys())[0]])
        improved: List[Tuple[str, Optional[str], str]] = []  # key, previous path, new name
        for key_indicator, rule in zip(self.key_indicators, self.rules):
            score_key, path_key = self._best_keys(key_indicator)
            best = runner.message_hub.get_info(score_key, self.init_value_map[rule])
            score = metrics[key_indicator]
            if score is None or not self.is_better_than[key_indicator](score, best):
                continue
            name = self._best_name(key_indicator, step)
            previous = self._best_path(key_indicator)
            self._set_best_path(key_indicator, self.file_backend.join_path(self.out_dir, name))
            runner.message_hub.update_info(score_key, score)
            runner.message_hub.update_info(path_key, self._best_path(key_indicator))
            improved.append((key_indicator, previous, name))
        if not improved:
            return
        resaved = self.last_ckpt is not None
        if resaved:
            self._save_checkpoint_with_step(runner, step,
                                            dict(epoch=runner.epoch, iter=runner.iter))
        for key_indicator, _, name in improved:
            self._save_best_file(runner, name)
            score = runner.message_hub.get_info(self._best_keys(key_indicator)[0])
            runner.logger.info(f'The best checkpoint with {score:0.4f} {key_indicator} at '
                               f'{step} {"epoch" if self.by_epoch else "iter"} is saved to '
                               f'{name}.')
        self.superseded_best += [
            previous for key_indicator, previous, _ in improved
            if previous and previous != self._best_path(key_indicator)
            and self._is_own_best(key_indicator, previous)
        ]
        if resaved:
            self._remove_superseded_best(runner)

    def _remove_superseded_best(self, runner) -> None:
        """Remove the previous best files: a resumable checkpoint records their successors."""
        if is_main_process():
            for path in self.superseded_best:
                self._remove_path(path)
                runner.logger.info(f'The previous best checkpoint {path} is removed')
        self.superseded_best = []

    def _reconcile_best(self, runner) -> None:
        """After a resume: write the recorded best file if the crash kept it
        from being written at the resumed step, and remove the best files of
        the same key indicator from earlier steps that the checkpoint does not
        record (later ones, of a run resumed from an older checkpoint, stay)."""
        step = runner.epoch if self.by_epoch else runner.iter
        for key_indicator in self.key_indicators:
            recorded = runner.message_hub.get_info(self._best_keys(key_indicator)[1])
            if recorded is None:
                continue
            name = self._best_name(key_indicator, step)
            if not osp.isfile(recorded) and osp.basename(recorded) == name:
                self._save_best_file(runner, name)
                runner.logger.info(f'rewrote the best checkpoint {recorded}, which a crash kept '
                                   'from being written')
            pattern = self._best_pattern(key_indicator)
            for path in Path(self.out_dir).iterdir():
                found = pattern.fullmatch(path.name)
                if (found and int(found.group(1)) < step and path.is_file()
                        and osp.abspath(path) != osp.abspath(recorded)):
                    path.unlink()
                    runner.logger.info(f'removed {path}: an earlier best checkpoint the resumed '
                                       'run does not record')

    def _is_own_best(self, key_indicator: str, path: str) -> bool:
        """Whether ``path`` (a best path recorded in a checkpoint, so untrusted)
        names one of this hook's best files of ``key_indicator`` in ``out_dir``:
        nothing else is ever removed."""
        name = osp.basename(path)
        return (self._best_pattern(key_indicator).fullmatch(name) is not None
                and path == self.file_backend.join_path(self.out_dir, name))

    def _best_pattern(self, key_indicator: str):
        """The names of a key indicator's best files; group 1 is the step."""
        prefix = re.escape(f'best_{key_indicator}_'.replace('/', '_'))
        return re.compile(prefix + re.escape(self.filename_tmpl).replace(r'\{\}', r'(\d+)'))

    def _validate_resumed_step(self, runner) -> None:
        """Validate the resumed step again if it was due and its checkpoint
        does not record that it was done."""
        step = runner.epoch if self.by_epoch else runner.iter
        loop = runner.train_loop
        if step == 0 or runner.val_loop is None or not hasattr(loop, 'val_interval'):
            return
        last = loop.max_epochs if self.by_epoch else loop.max_iters
        due = step >= loop.val_begin and (step % loop.val_interval == 0 or step == last)
        if due and runner.message_hub.get_info(VALIDATED_KEY) != step:
            runner.logger.info(f'validating {"epoch" if self.by_epoch else "iter"} {step} '
                               'again: the resumed checkpoint does not record its validation')
            runner.val_loop.run()

    # ----------------------------------------------------- epoch checkpoints
    def _remove_checkpoint(self, step: int) -> None:
        self._remove_path(
            self.file_backend.join_path(self.out_dir, self.filename_tmpl.format(step)))

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
        if is_main_process():
            with atomic_target(osp.join(runner.work_dir, 'last_checkpoint')) as tmp:
                tmp.write_text(self.last_ckpt)
            for old_step in outdated:
                self._remove_checkpoint(old_step)
        self._remove_superseded_best(runner)
