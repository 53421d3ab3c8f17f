"""A model's heads and the data set a loop runs have the same classes."""
from mmengine.hooks import Hook
from mmengine.registry import HOOKS

from ..class_counts import check_data_set_classes


@HOOKS.register_module()
class ClassCountCheckHook(Hook):
    """Refuse, before a loop runs, a data set whose classes differ in number from a
    model head's ``num_classes``
    (:func:`~mmvitdyn.engine.class_counts.check_data_set_classes`), from the data
    set the loop runs; ``build_runner`` registers it on every runner.

    Raises:
        SetupError: In ``before_train`` (the training and validation data
            sets), ``before_val`` or ``before_test``.
    """
    priority = 'VERY_HIGH'

    def before_train(self, runner) -> None:
        check_data_set_classes(runner.cfg, 'train_dataloader', runner.train_dataloader.dataset)
        if runner.val_loop is not None:  # before the first epoch, not after it
            self.before_val(runner)

    def before_val(self, runner) -> None:
        check_data_set_classes(runner.cfg, 'val_dataloader', runner.val_dataloader.dataset)

    def before_test(self, runner) -> None:
        check_data_set_classes(runner.cfg, 'test_dataloader', runner.test_dataloader.dataset)
