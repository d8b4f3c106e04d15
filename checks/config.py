"""Under another ReFrame configuration than gpucomm's (``reframe -c checks/ -r`` without
RFM_CONFIG_FILES or -C), the one check selected: it fails saying how to load config/settings.py
(gpucomm.rfm.guard).  Under gpucomm's configuration it is never selected."""

import reframe as rfm

from gpucomm.rfm import ConfigGuard


@rfm.simple_test
class GpucommConfigCheck(ConfigGuard):
    pass
