# DyT-AdaMix on CIFAR-100, the DyT authors' review comparison (d = 64): the
# MoE-adapter replaced by AdaMix (Wang et al. 2022) with 4 experts, trained
# as AdaMix's published scripts train it (microsoft/AdaMix, d361e9d).
# - Shared up-projection: each forward of each block draws one of the 4
#   down-projections; the up-projection is one, shared by all 4 (the
#   AdaMixAdapter default, share_up=True): --sharing_up 1 --sharing_down 0 in
#   bert_base_mnli_expert_soup.sh and roberta_large_mnli_expert_soup.sh
#   (l. 32-33) and the README, --share_A 0 --share_B 1 in every
#   NLG/run_train_*.sh (l. 33-34). No router; the whole batch shares the
#   draw. At inference the experts are averaged into one adapter, so the
#   cost is one adapter's.
# - Consistency loss (--use_consistency_loss 1, l. 35 of both scripts): a
#   second dynamic pass, with its own draws, enters only the symmetric KL
#   with the first, weight 1, as RoBERTa's classifier adds it
#   (src/transformers/models/roberta/modeling_roberta.py, symmetric_KL_loss
#   l. 1179-1188, used at l. 1261-1276; BERT's classifier never reads the
#   flag, and GPT-2 in NLG/src/model.py weights a per-token version by 100).
# - AdamW: the experts are slices of stacked tensors, so an expert a step
#   did not draw gets a zero gradient and is still decayed and moved by its
#   moments. So it is in AdaMix's runs once an expert has been drawn: the HF
#   Trainer 4.4.2 there calls model.zero_grad() (src/transformers/trainer.py
#   l. 1116) on torch 1.9 (environment.yml), which zeroes gradients instead
#   of setting them to None, and its AdamW skips only None
#   (src/transformers/optimization.py l. 322). What differs is an expert's
#   steps before its first draw: AdaMix skips them (its Adam step count
#   starts at that draw), ours decays it; 4 experts drawn at random per
#   forward are all drawn within the first few steps.
# Everything else is the DyT CIFAR-100 run; DyT's complete pass draws its
# own experts and its distillation term ties it to the first dynamic pass.
_base_ = ['./vit-b-p16-dyt_d64_8xb128-100e_cifar100-224px.py']
model = dict(
    consistency_loss_weight=1.0, backbone=dict(adapter_cfg=dict(num_experts=4, mixing='adamix')))
