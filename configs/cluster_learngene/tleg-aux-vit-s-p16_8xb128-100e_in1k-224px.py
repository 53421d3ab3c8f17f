# An earlier name, kept so that the commands and configs that name it keep
# working: it is tleg-aux-vit-s-p16_levit-384-distill_8xb64-150e_in1k-224px.py,
# the Aux-Net trained as TLEG's public code trains it (150 epochs, batch 512,
# distilled from LeViT-384, no class token, drop path 0.0). The recipe this name
# stood for (class token, labels, drop path 0.1, 100 epochs) is gone: its
# checkpoints do not load into this model.
_base_ = ['./tleg-aux-vit-s-p16_levit-384-distill_8xb64-150e_in1k-224px.py']
