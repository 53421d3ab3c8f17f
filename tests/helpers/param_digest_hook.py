"""Test-only hook: after training, each rank writes a digest of its parameters."""
import json
import os.path as osp

from mmengine.dist import get_rank
from mmengine.hooks import Hook
from mmengine.model import is_model_wrapper
from mmengine.registry import HOOKS


@HOOKS.register_module()
class ParamDigestHook(Hook):

    def after_train(self, runner):
        model = runner.model.module if is_model_wrapper(runner.model) else runner.model
        digest = {
            name: [float(p.sum()), float(p.abs().sum())]
            for name, p in model.named_parameters()
        }
        path = osp.join(runner.work_dir, f'param_digest_rank{get_rank()}.json')
        with open(path, 'w') as f:
            json.dump(digest, f)
