return normtune.sweep { op = "layernorm", shapes = {}, families = {persistent = {params = {blok = {1}}}} }
