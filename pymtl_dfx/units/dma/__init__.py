"""DMA: HBM and DDR transfers, the MPU weight stream, transposed V writes."""
